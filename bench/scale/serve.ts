/**
 * The service under the scale bench's HTTP load, in a process of its own (the bench's client
 * never shares its event loop): createPortcullis with the JSON config in SCALE_SERVICE_CONFIG,
 * listening on a free loopback port. Prints one line, {"url": ...}; SIGTERM closes it.
 */
import { createPortcullis, type PortcullisConfig } from "../../src/index.ts";

const config = JSON.parse(process.env.SCALE_SERVICE_CONFIG ?? "{}") as PortcullisConfig;
const service = await createPortcullis(config);
const url = await service.listen(0, "127.0.0.1");
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.once("SIGTERM", () => {
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
