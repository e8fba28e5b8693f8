/**
 * Text into HTML (element content or a quoted attribute): the five characters that could end a
 * text node or an attribute value become entities, so user-supplied text never becomes markup.
 */
const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}
