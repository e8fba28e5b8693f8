#!/usr/bin/env -S node --max-semi-space-size=2
// --max-semi-space-size=2 (MiB, V8's young generation; default 16 on 64-bit): idle RSS 115 -> 92 MiB,
// and after a minute of load ~140 -> ~120 MiB, at no measurable cost in throughput (issue 14; the
// bench's footprint rows). `npm start` passes the same flag; V8 takes it only on the command line.
// The CLI, compiled (dist/, ESM): no TypeScript loader in the serving process. A checkout whose
// sources are newer than dist/ (or has none yet) builds first (scripts/build.mjs).
import { ensureBuilt } from "../scripts/build.mjs";

try {
  ensureBuilt();
} catch (err) {
  // tsc printed its errors above: one line to say what stopped the start, no stack.
  process.stderr.write(`portcullis: cannot build dist/ from the sources: ${err instanceof Error ? err.message : err}. Fix: correct the errors above, or run npm run build.\n`);
  process.exit(1);
}
await import("../dist/src/cli.js");
