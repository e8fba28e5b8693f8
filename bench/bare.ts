/**
 * Baseline: a bare node:http server answering a fixed JSON body (BENCH_BARE_BODY, by default a
 * body the size of a get-session answer), in its own process. Same ready/probe protocol.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { reportReady, serveProbe } from "./probe.ts";

const body = Buffer.from(process.env.BENCH_BARE_BODY ?? JSON.stringify({ ok: true, pad: "x".repeat(760) }));
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
});
server.keepAliveTimeout = 5000;
await new Promise<void>((resolve) => server.listen(Number(process.env.BENCH_PORT ?? 0), "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;
serveProbe(() => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
}));
reportReady({ url: `http://127.0.0.1:${port}`, bytes: body.length });
