import { useState, type FormEvent } from "react";
import { formatCount } from "./format.ts";

/** Offset paging as list-users and list-audit-events give it: first, previous, next, last, and a page number. */
export function Pager({ label, total, limit, offset, onOffset }: { label: string; total: number; limit: number; offset: number; onOffset: (offset: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const page = Math.floor(offset / limit) + 1;
  const last = (pages - 1) * limit;
  const [jump, setJump] = useState("");

  function go(event: FormEvent) {
    event.preventDefault();
    const n = Number(jump);
    if (Number.isInteger(n) && n >= 1 && n <= pages) onOffset((n - 1) * limit);
    setJump("");
  }

  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <p>
        {total === 0 ? "None" : `${formatCount(offset + 1)}–${formatCount(Math.min(offset + limit, total))} of ${formatCount(total)}`} · page{" "}
        {formatCount(page)} of {formatCount(pages)}
      </p>
      <button type="button" onClick={() => onOffset(0)} disabled={offset === 0}>
        First
      </button>
      <button type="button" onClick={() => onOffset(Math.max(0, offset - limit))} disabled={offset === 0}>
        Previous
      </button>
      <button type="button" onClick={() => onOffset(offset + limit)} disabled={offset + limit >= total}>
        Next
      </button>
      <button type="button" onClick={() => onOffset(last)} disabled={offset >= last}>
        Last
      </button>
      <form onSubmit={go} className="inline-form">
        <label htmlFor={`${label}-page`}>Page</label>
        <input id={`${label}-page`} inputMode="numeric" size={8} value={jump} onChange={(e) => setJump(e.target.value)} />
        <button type="submit">Go</button>
      </form>
    </nav>
  );
}
