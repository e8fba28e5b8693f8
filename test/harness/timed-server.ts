import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The service's handler behind a server of the test's own that times each answer from the
 * request's arrival to the moment it is handed to the socket: what a remote client measures minus
 * the network, without the test process's own scheduling delays on a loaded machine (the client's
 * clock adds those to every kind unevenly). The enumeration test times the same way.
 */
export interface TimedServer {
  /** Base URL of the timed server (the handler's basePath not included). */
  url: string;
  /** POSTs JSON; resolves with the answer and the service's own time for it, in ms. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; text: string; ms: number }>;
  close(): Promise<void>;
}

export async function startTimedServer(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<TimedServer> {
  const times = new Map<string, (ms: number) => void>();
  let nextId = 0;
  const server = createServer((req, res) => {
    const started = performance.now();
    const id = String(req.headers["x-timing-id"]);
    res.once("finish", () => times.get(id)?.(performance.now() - started));
    void handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async post(path, body, headers = {}) {
      const id = String(++nextId);
      const timed = new Promise<number>((resolve) => times.set(id, resolve));
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-timing-id": id, ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const ms = await timed;
      times.delete(id);
      return { status: res.status, text, ms };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
