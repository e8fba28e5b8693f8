"use strict";
// Password hashes run on libuv's thread pool, one thread per core: during a sign-in flood they
// hold every core, and the event loop, woken by a request, waited for the scheduler to take a
// core back from one of them. On 2 cores a get-session beside a sign-in flood answered at p99 in
// 4.0-4.4 ms from the compiled CLI (0.07 ms at p50); with the pool's threads 10 nice levels below
// the event loop, 1.6-2.3 ms (bench/flood.ts), and the sign-ins kept their rate: the hashes take
// whatever CPU the event loop leaves. (Also below other processes of the host at the service's
// priority: PORTCULLIS_HASH_NICE=0 keeps them level, docs/deploying.md.)
const { stat, readdirSync } = require("node:fs");
const { getPriority, setPriority } = require("node:os");

/** PORTCULLIS_HASH_NICE: nice levels between the event loop and the pool, 0 to 19 (default 10; 0 = same priority). */
function hashNice(raw) {
  if (raw === undefined || raw === "") return 10;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19) {
    process.stderr.write(`portcullis: PORTCULLIS_HASH_NICE must be a whole number from 0 to 19, got ${JSON.stringify(raw)}.\n`);
    process.exit(1);
  }
  return n;
}

/**
 * Starts libuv's pool now (its first job: libuv creates every thread before that call returns)
 * and lowers the new threads' priority: the threads that appeared in /proc/self/task meanwhile.
 * Linux only (elsewhere, or if something started the pool already, nothing is changed).
 * Returns the thread ids lowered.
 */
function lowerPoolPriority(levels) {
  if (levels === 0) return [];
  let before;
  try {
    before = new Set(readdirSync("/proc/self/task"));
  } catch {
    return [];
  }
  stat(__filename, () => {});
  const pool = readdirSync("/proc/self/task").filter((tid) => !before.has(tid));
  const nice = Math.min(19, getPriority() + levels);
  for (const tid of pool) setPriority(Number(tid), nice);
  return pool;
}

module.exports = { hashNice, lowerPoolPriority };
