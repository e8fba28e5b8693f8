import { once } from "node:events";
import type { ServerResponse } from "node:http";

/** A page of a paged procedure the bridge streams (routes.ts `ndjson`): its items and the next page's cursor. */
export interface StreamPage {
  events: unknown[];
  nextCursor: string | null;
}

/**
 * Streams every page as NDJSON (one JSON object per line, application/x-ndjson): the first page
 * the procedure answered, then `nextPage(cursor)` until a page says there is no more. Each page
 * is its own query (and the procedure's guards run again), so a long export holds no transaction
 * and no lock. Written with backpressure: a slow reader slows the reads; a reader that leaves
 * ends them. A failure after the first line cuts the stream short (no trailing error object: a
 * line-oriented reader would take it for an event); the reader resumes from the last id it got.
 */
export async function streamNdjson(res: ServerResponse, headers: Record<string, string | string[]>, first: StreamPage, nextPage: (cursor: string) => Promise<StreamPage>): Promise<void> {
  res.writeHead(200, { ...headers, "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
  let page = first;
  try {
    for (;;) {
      const chunk = page.events.map((e) => `${JSON.stringify(e)}\n`).join("");
      if (chunk && !res.write(chunk)) await Promise.race([once(res, "drain"), once(res, "close")]);
      if (page.nextCursor === null || res.destroyed) break;
      page = await nextPage(page.nextCursor);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
