#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=30
"use strict";
// --max-semi-space-size=2 (MiB, V8's young generation; default 16 on 64-bit): idle RSS 115 -> 92 MiB,
// and after a minute of load ~140 -> ~120 MiB, at no measurable cost in throughput (the
// bench's footprint rows). --heap-growing-percent=30: the old generation may grow 1.3x its live
// size before the next full collection, where V8 allows up to 4x on a machine with this much
// memory: after a minute of the bench's load V8's pages held 35 MiB with it, 48 without (RSS 133
// against 144-151 MiB), at no cost in throughput measured. `npm start` passes the same flags; V8
// takes them only on the command line.
//
// CommonJS on purpose: libuv fixes its thread pool's size the first time it uses it, and node
// reads an ES module entry through that pool. Password hashes run there: one thread per core
// (libuv's default is 4 whatever the machine: on 2 cores 4 hashes at once ran 15% slower each
// and held 4 x 19 MiB; on 16 cores 4 would leave 12 idle). An operator's UV_THREADPOOL_SIZE
// wins; PORTCULLIS_AUTO_POOL tells `serve --workers` to divide the cores among its workers.
const { availableParallelism } = require("node:os");
const { hashNice, lowerPoolPriority } = require("./pool-priority.cjs");
const { stopWithParent } = require("./npm-parent.cjs");

if (!process.env.UV_THREADPOOL_SIZE) {
  process.env.UV_THREADPOOL_SIZE = String(availableParallelism());
  process.env.PORTCULLIS_AUTO_POOL = "1";
}
// The pool's threads yield the CPU to the event loop (bin/pool-priority.cjs).
lowerPoolPriority(hashNice(process.env.PORTCULLIS_HASH_NICE));

// Under npm, this process ends with the npm process a process manager holds (bin/npm-parent.cjs).
stopWithParent(process.env);

// The CLI, compiled (dist/, ESM): no TypeScript loader in the serving process. A checkout whose
// sources are newer than dist/ (or has none yet) builds first (scripts/build.mjs).
(async () => {
  const { ensureBuilt } = await import("../scripts/build.mjs");
  try {
    ensureBuilt();
  } catch (err) {
    // tsc printed its errors above: one line to say what stopped the start, no stack.
    process.stderr.write(`portcullis: cannot build dist/ from the sources: ${err instanceof Error ? err.message : err}. Fix: correct the errors above, or run npm run build.\n`);
    process.exit(1);
  }
  await import("../dist/src/cli.js");
})();
