// Loaded into a server process with `node --import` (test/process/no-async-context.test.ts).
// On Node 20, the first AsyncLocalStorage#run or #enterWith (or any async hook enabled) turns
// promise hooks on for the rest of the process: every promise pays for them. This reports each
// such activation, with the stack that made it, as one JSON line appended to the file named by
// PORTCULLIS_ASYNC_PROBE_FILE (synchronously, so a test reading it after an answer sees it),
// or to standard error when that is unset. Its first line says it is loaded (kind "loaded").
import { AsyncLocalStorage, createHook } from "node:async_hooks";
import { appendFileSync, writeSync } from "node:fs";

const file = process.env.PORTCULLIS_ASYNC_PROBE_FILE;

function report(kind, stack = true) {
  const holder = { stack: "" };
  if (stack) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    Error.captureStackTrace(holder, report);
    Error.stackTraceLimit = limit;
  }
  const line = `${JSON.stringify({ probe: "async-context", kind, pid: process.pid, stack: holder.stack })}\n`;
  if (file) appendFileSync(file, line);
  else writeSync(2, line);
}

const { run, enterWith } = AsyncLocalStorage.prototype;
AsyncLocalStorage.prototype.run = function probedRun(...args) {
  report("AsyncLocalStorage#run");
  return run.apply(this, args);
};
AsyncLocalStorage.prototype.enterWith = function probedEnterWith(...args) {
  report("AsyncLocalStorage#enterWith");
  return enterWith.apply(this, args);
};

// Every AsyncHook shares one prototype (lib/async_hooks.js): AsyncLocalStorage's own hook too.
const AsyncHook = Object.getPrototypeOf(createHook({}));
const { enable } = AsyncHook;
AsyncHook.enable = function probedEnable(...args) {
  report("async_hooks.createHook().enable");
  return enable.apply(this, args);
};

report("loaded", false);
