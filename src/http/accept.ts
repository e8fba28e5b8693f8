/**
 * Content negotiation on Accept (RFC 9110 §12.5.1), enough to tell a browser navigation from a
 * program: the bridge sends a browser's failed callback to the error page (rest-bridge/html.ts),
 * and the magic link shows a browser its confirm page instead of signing in on a GET.
 */

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(",").flatMap((part) => {
    const [range = "", ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    const [type, subtype] = range.split("/");
    if (!type || !subtype) return [];
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return Number.isFinite(q) ? [{ type, subtype, q: Math.min(Math.max(q, 0), 1) }] : [];
  });
}

/** RFC 9110 §12.5.1: the weight of the most specific range that matches `mime` (0 when none does). */
function weight(ranges: MediaRange[], mime: string): number {
  const [type, subtype] = mime.split("/");
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 };
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === "*" ? 1 : r.type === "*" && r.subtype === "*" ? 0 : -1;
    if (specificity > best.specificity) best = { specificity, q: r.q };
  }
  return best.q;
}

/**
 * A browser navigation: its Accept weighs text/html above JSON (browsers send
 * `text/html,…,*\/*;q=0.8`). No Accept, `*\/*` or a JSON client keeps the JSON answers.
 */
export function prefersHtml(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(",") : accept;
  if (!value) return false;
  const ranges = mediaRanges(value);
  return weight(ranges, "text/html") > weight(ranges, "application/json");
}
