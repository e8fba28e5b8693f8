/** Dates as the admin's locale writes them, with the ISO value kept for a tooltip. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}
