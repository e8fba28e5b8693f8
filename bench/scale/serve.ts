/**
 * The service under the scale bench's HTTP load, in a process of its own (the bench's client
 * never shares its event loop): createPortcullis with the JSON config in SCALE_SERVICE_CONFIG,
 * listening on a free loopback port; beside it, in the same process, a bare node:http server
 * answering a fixed JSON of a get-session answer's size: what this machine alone does to the
 * latency tail. Prints one line, {"url", "bareUrl"}; SIGTERM closes both.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPortcullis, type PortcullisConfig } from "../../src/index.ts";

const config = JSON.parse(process.env.SCALE_SERVICE_CONFIG ?? "{}") as PortcullisConfig;
const service = await createPortcullis(config);
const url = await service.listen(0, "127.0.0.1");
const answer = JSON.stringify({ session: { id: "0".repeat(36), padding: "x".repeat(700) } });
const bare = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
  res.end(answer);
});
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
process.stdout.write(`${JSON.stringify({ url, bareUrl })}\n`);
process.once("SIGTERM", () => {
  bare.close();
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
