// Loaded with `node --import` into a server process (test/process/lean-load.test.ts): on SIGUSR2 it
// writes the CommonJS modules loaded so far (every package we load lazily is CommonJS, or is
// reached through one) to stderr as one `LOADED_MODULES <json>` line.
import { createRequire } from "node:module";

process.on("SIGUSR2", () => {
  process.stderr.write(`LOADED_MODULES ${JSON.stringify(Object.keys(createRequire(import.meta.url).cache))}\n`);
});
