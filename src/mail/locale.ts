/**
 * The languages an Accept-Language header names, best first (RFC 9110 §12.5.4): `q` weights
 * (default 1), ties in the order written, `q=0` and `*` left out, malformed entries skipped.
 * Bounded: a header longer than 1 KiB is cut, at most 20 ranges are read.
 */
const LANGUAGE_RANGE = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;
const QVALUE = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

export function acceptedLocales(header: string | null | undefined): string[] {
  if (!header) return [];
  const ranges: { tag: string; q: number; at: number }[] = [];
  for (const [at, part] of header.slice(0, 1024).split(",").slice(0, 20).entries()) {
    const [rawTag = "", ...params] = part.split(";").map((s) => s.trim());
    if (!LANGUAGE_RANGE.test(rawTag)) continue;
    let q = 1;
    for (const param of params) {
      if (!/^q=/i.test(param)) continue;
      if (!QVALUE.test(param)) q = -1;
      else q = Number(param.slice(2));
    }
    if (q > 0) ranges.push({ tag: rawTag, q, at });
  }
  ranges.sort((a, b) => b.q - a.q || a.at - b.at);
  return [...new Set(ranges.map((r) => r.tag))];
}
