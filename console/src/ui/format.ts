/** Dates as the admin's locale writes them, with the ISO value kept for a tooltip. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** "1 user matches", "243 users match". */
export function matches(n: number, noun: string): string {
  return n === 1 ? `1 ${noun} matches` : `${formatCount(n)} ${noun}s match`;
}
