/** Latency samples: percentiles, a seeded PRNG (the same picks every run), a timer, a lean HTTP client. */
import { Agent, request } from "undici";

/**
 * One keep-alive connection per origin, requests one at a time: the client's own cost stays
 * small beside the figure (fetch() builds a WHATWG Request/Response per call, ~0.3 ms here).
 */
const agent = new Agent({ connections: 1, pipelining: 1 });

/** Closes the client's connections (the process can then exit). */
export const closeClient = () => agent.close();

export async function getJson<T = unknown>(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const res = await request(url, { dispatcher: agent, headers });
  return { status: res.statusCode, body: (await res.body.json()) as T };
}

export interface Latency {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

export function latency(ms: number[]): Latency {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN, samples: sorted.length };
}

/** mulberry32: deterministic picks, so before/after runs ask for the same rows. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

/** Runs `fn` `warmup` times unmeasured, then `samples` times, one at a time. */
export async function sample(samples: number, warmup: number, fn: (i: number) => Promise<unknown>): Promise<Latency> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) ms.push((await timed(() => fn(i))).ms);
  return latency(ms);
}
