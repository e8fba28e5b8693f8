"use strict";
// `npx portcullis serve` runs this file under `sh -c "portcullis serve"`, a child of npm, and a
// process manager holds npm's pid. On SIGTERM npm passes the signal to the shell only, which dies
// of it and leaves this process running, orphaned and still listening (docs/operations.md,
// Shutdown). So a process npm started watches its parent: once the parent is gone, it stops as on
// SIGTERM. Only under npm (`npx`, `npm start`): a server started with `nohup ... &` must outlive
// the shell that started it.
const NPM_EVENTS = new Set(["npx", "start"]);
const POLL_MS = 250;

function stopWithParent(env) {
  if (!NPM_EVENTS.has(env.npm_lifecycle_event ?? "")) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    // process.ppid asks the kernel each time: an orphan's parent is init (or a subreaper).
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, POLL_MS);
  timer.unref();
}

module.exports = { stopWithParent };
