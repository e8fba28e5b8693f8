/**
 * SIGTERM and SIGINT as `serve` takes them: the first starts a graceful stop, a later one (an
 * operator who will not wait) ends the process at once. One Ctrl-C reaches the server several
 * times: the terminal signals the whole process group, and npm (and tsx watch, in `npm run dev`)
 * pass the same signal on to their child milliseconds later; under npm a parent that died sends
 * one more (bin/npm-parent.cjs). Signals within REPEAT_GRACE_MS of the first are that same stop.
 */
const REPEAT_GRACE_MS = 1000;

export function onStopSignals(stop: (signal: NodeJS.Signals) => void, force: (signal: NodeJS.Signals) => void): void {
  let first: number | undefined;
  const handle = (signal: NodeJS.Signals) => {
    const now = performance.now();
    if (first === undefined) {
      first = now;
      stop(signal);
    } else if (now - first >= REPEAT_GRACE_MS) force(signal);
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
}
