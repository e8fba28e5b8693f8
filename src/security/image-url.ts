/**
 * What a user's `image` may be: an absolute http(s) URL, nothing else.
 * Clients put it in `<img src>` and links; `javascript:`, `vbscript:`, `data:text/html` or
 * `data:image/svg+xml` there can run script, and relative junk resolves against whatever page
 * shows it. Data URIs are not kept even for raster types: within the 2048-character cap they
 * only hold thumbnails, and an allow-list of media types is one more parser to get right
 * (OWASP XSS Prevention Cheat Sheet, rule 5: validate URLs against an http(s) allow-list).
 */
export const IMAGE_URL_MAX_LENGTH = 2048;

/** Controls, space and DEL: the URL parser strips or skips some of them, which hides a scheme. */
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f]/;

export function isSafeImageUrl(value: string): boolean {
  if (value.length > IMAGE_URL_MAX_LENGTH || UNSAFE_CHARACTERS.test(value)) return false;
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  // Credentials in an image URL only serve look-alike hosts (`https://cdn.example@evil.test/`).
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && url.username === "" && url.password === "";
}
