/**
 * One spelling per path, decided once per request, before routing and rate limiting
 * (docs/security.md, credential stuffing): `/sign-in//email`, `/sign-in/%65mail`, `/sign-in%2Femail` and `/sign-in/email/` all are
 * `/sign-in/email`, so they reach the same route and share its budget. Case is kept: the router
 * is case-sensitive, so another case is simply a path with no route (404).
 *
 * Input is a WHATWG `URL.pathname`, whose parser has already resolved `.` and `..` segments
 * (`%2e` spellings included) and turned `\` into `/`.
 */

/** Nothing to decode, no empty segment, no trailing slash: the common case costs three scans. */
function isClean(pathname: string): boolean {
  return !pathname.includes("%") && !pathname.includes("//") && (pathname.length === 1 || !pathname.endsWith("/"));
}

/**
 * The canonical path: percent-decoded once (RFC 3986 §6.2.2.2; `%2F` becomes a separator, `%25`
 * a literal `%` that is never decoded again), empty and `.` segments dropped, `..` resolved
 * (RFC 3986 §5.2.4), no trailing slash. null for a malformed escape (`%ZZ`): no route has one.
 */
export function normalisePath(pathname: string): string | null {
  if (isClean(pathname)) return pathname;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  const segments: string[] = [];
  for (const segment of decoded.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join("/")}`;
}
