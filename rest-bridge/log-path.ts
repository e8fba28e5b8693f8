/**
 * The path a 404's log line carries (docs/operations.md "Logs"): no query or fragment (they carry
 * codes and tokens), and every segment of 20 or more characters that mixes letters and digits,
 * the shape of a token, replaced by `:token`. Capped, so a long probe cannot bloat the log.
 */
const MAX_LOGGED_PATH = 256;

function tokenShaped(segment: string): boolean {
  return segment.length >= 20 && /[A-Za-z]/.test(segment) && /[0-9]/.test(segment);
}

export function sanitisedPath(target: string | undefined): string {
  const raw = (target ?? "/").split(/[?#]/, 1)[0]!;
  const path = raw
    .split("/")
    .map((segment) => (tokenShaped(segment) ? ":token" : segment))
    .join("/");
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}
