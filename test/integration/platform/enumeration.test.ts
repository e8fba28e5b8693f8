import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Enumeration: nobody learns whether an address has an account, neither from the
 * answer nor from its timing. The median latency of sign-in with an unknown email is within 10%
 * of the median for a known email with a wrong password; request-password-reset, the magic link
 * and the one-time code sends likewise; the bodies are identical.
 *
 * What is timed is the service's own time per request, from the request's arrival to the moment
 * its answer is handed to the socket (TIMED), which is what a remote client's clock measures
 * minus the network. The client runs in a worker thread (see CLIENT). Robust on a loaded machine: the two kinds run
 * in pairs, each pair in a random order (whatever else the machine does hits both alike); the
 * first requests of each kind are warm-up; deferred work (the reset mail job) is awaited between
 * requests, outside the timed part; a verdict that misses is re-measured with a fresh batch (up
 * to 3), medians over all samples so far. A real leak (e.g. skipping argon2 for unknown users:
 * ~1 ms against ~20 ms) fails every batch.
 */

const PASSWORD = "known-user-password-1";
let server: TestServer;
let knownEmail: string;
/** The service's handler behind a server of the test's own, which times each answer. */
let timed: Server;
let timedUrl: string;
/** Each request's service time, by its x-timing-id, once its answer is handed to the socket. */
const serverMs = new Map<string, { promise: Promise<number>; resolve: (ms: number) => void }>();
function serverTime(id: string) {
  let entry = serverMs.get(id);
  if (!entry) {
    let resolve!: (ms: number) => void;
    const promise = new Promise<number>((r) => (resolve = r));
    serverMs.set(id, (entry = { promise, resolve }));
  }
  return entry;
}

beforeAll(async () => {
  // Rate limits off. Magic links only for accounts: known and unknown addresses then differ in what happens after the answer.
  server = await startTestServer({ magicLink: { disableSignUp: true } });
  knownEmail = sameShapeEmail(0);
  const res = await post(`${server.auth}/sign-up/email`, { name: "Known", email: knownEmail, password: PASSWORD });
  expect(res.status, res.text).toBe(200);
  client = new Worker(CLIENT, { eval: true });
  timed = createServer((req, res) => {
    const started = performance.now();
    const id = String(req.headers["x-timing-id"]);
    res.once("finish", () => serverTime(id).resolve(performance.now() - started));
    void server.portcullis.handler(req, res);
  });
  await new Promise<void>((resolve) => timed.listen(0, "127.0.0.1", resolve));
  timedUrl = `http://127.0.0.1:${(timed.address() as AddressInfo).port}${server.portcullis.app.config.basePath}`;
});

afterAll(async () => {
  await new Promise((resolve) => timed?.close(resolve));
  await client?.terminate();
  await server?.close();
});

/**
 * The client runs in a worker thread, so the server's thread only serves. The time compared is the
 * service's (TIMED above): a client's own clock, on a machine whose cores other test files and
 * the database also want, adds its scheduling delays to both kinds unevenly, and reads a
 * response only after whatever the server's thread runs right after writing it (the reset mail
 * job), which a remote client never waits for.
 */
const CLIENT = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ id, url, body }) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-timing-id": String(id) }, body: JSON.stringify(body) });
  const text = await res.text();
  parentPort.postMessage({ id, status: res.status, text, setCookie: res.headers.get("set-cookie") });
});
`;
let client: Worker;
let nextId = 0;

interface Timed {
  ms: number;
  status: number;
  text: string;
  setCookie: string | null;
}

function timedPost(path: string, body: unknown): Promise<Timed> {
  const id = ++nextId;
  return new Promise((resolve) => {
    const onMessage = (m: Omit<Timed, "ms"> & { id: number }) => {
      if (m.id !== id) return;
      client.off("message", onMessage);
      void serverTime(String(id)).promise.then((ms) => {
        serverMs.delete(String(id));
        resolve({ ...m, ms });
      });
    };
    client.on("message", onMessage);
    client.postMessage({ id, url: `${timedUrl}${path}`, body });
  });
}

/** Known and unknown addresses of one length and shape: only their existence differs. */
const run = Date.now().toString(36);
function sameShapeEmail(n: number): string {
  return `user-${run}-${String(n).padStart(6, "0")}@example.test`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface Verdict {
  known: number;
  unknown: number;
  ratio: number;
  samples: number;
}

/**
 * Times `perKind` requests of each kind, interleaved at random; returns the medians. Every
 * answer is checked by `expectSame` against the first answer of the other kind.
 */
async function compare(
  perKind: number,
  send: (kind: "known" | "unknown", i: number) => Promise<Timed>,
  expectSame: (known: Timed, unknown: Timed) => void,
): Promise<Verdict> {
  const times = { known: [] as number[], unknown: [] as number[] };
  const first: Partial<Record<"known" | "unknown", Timed>> = {};
  // warm-up: connection, prepared statements, the dummy hash (made on the first unknown sign-in)
  for (let i = 0; i < 3; i++) {
    for (const kind of ["known", "unknown"] as const) first[kind] ??= await send(kind, -1 - i);
    await server.portcullis.app.mailer.settle();
  }
  expectSame(first.known!, first.unknown!);
  for (let batch = 1; batch <= 6; batch++) {
    // Pairs, each in a random order: both kinds meet the same load, moment by moment.
    const order = Array.from({ length: perKind }, () => shuffled<"known" | "unknown">(["known", "unknown"])).flat();
    for (const [i, kind] of order.entries()) {
      const reply = await send(kind, batch * 1000 + i);
      times[kind].push(reply.ms);
      expectSame(kind === "known" ? reply : first.known!, kind === "unknown" ? reply : first.unknown!);
      await server.portcullis.app.mailer.settle(); // deferred work, outside the timed part
    }
    const known = median(times.known);
    const unknown = median(times.unknown);
    const verdict = { known, unknown, ratio: unknown / known, samples: times.known.length };
    console.log(`[enumeration ${testDialect}] batch ${batch}: ${JSON.stringify(verdict)}`);
    if (Math.abs(unknown - known) <= 0.1 * known) return verdict;
  }
  const known = median(times.known);
  const unknown = median(times.unknown);
  return { known, unknown, ratio: unknown / known, samples: times.known.length };
}

describe(`enumeration by timing and by answer (${testDialect})`, () => {
  it("sign-in: unknown email vs known email with a wrong password: same answer, medians within 10%", async () => {
    const verdict = await compare(
      40,
      (kind, i) =>
        timedPost("/sign-in/email", {
          email: kind === "known" ? knownEmail : sameShapeEmail(100_000 + i),
          password: `wrong-password-${i}`,
        }),
      (known, unknown) => {
        expect(known.status).toBe(401);
        expect(unknown.status).toBe(401);
        expect(unknown.text).toBe(known.text);
        expect(JSON.parse(known.text)).toEqual({ code: "INVALID_EMAIL_OR_PASSWORD", message: expect.any(String) });
        expect(unknown.setCookie).toBe(known.setCookie);
      },
    );
    expect(Math.abs(verdict.unknown - verdict.known), JSON.stringify(verdict)).toBeLessThanOrEqual(0.1 * verdict.known);
    // the known path really verifies argon2 (a cheap comparison would make this test meaningless)
    expect(verdict.known).toBeGreaterThan(5);
  }, 120_000);

  it("request-password-reset: unknown vs known email: same answer, medians within 10%", async () => {
    const verdict = await compare(
      100, // ~2 ms each: more samples for a tighter median
      (kind, i) =>
        timedPost("/request-password-reset", {
          email: kind === "known" ? knownEmail : sameShapeEmail(100_000 + i),
        }),
      (known, unknown) => {
        expect(known.status).toBe(200);
        expect(unknown.status).toBe(200);
        expect(unknown.text).toBe(known.text);
        expect(JSON.parse(known.text)).toEqual({ status: true, message: expect.any(String) });
      },
    );
    expect(Math.abs(verdict.unknown - verdict.known), JSON.stringify(verdict)).toBeLessThanOrEqual(0.1 * verdict.known);
  }, 120_000);

  // Only accounts get a link (magicLink.disableSignUp) or a reset code: the lookup, the token and SMTP run after the answer.
  for (const [path, body, answer] of [
    ["/sign-in/magic-link", {}, { status: true }],
    ["/email-otp/send-verification-otp", { type: "forget-password" }, { success: true }],
  ] as const) {
    it(`${path}: unknown vs known email: same answer, medians within 10%`, async () => {
      const verdict = await compare(
        100,
        (kind, i) => timedPost(path, { email: kind === "known" ? knownEmail : sameShapeEmail(200_000 + i), ...body }),
        (known, unknown) => {
          expect(known.status).toBe(200);
          expect(unknown.status).toBe(200);
          expect(unknown.text).toBe(known.text);
          expect(JSON.parse(known.text)).toEqual(answer);
        },
      );
      expect(Math.abs(verdict.unknown - verdict.known), JSON.stringify(verdict)).toBeLessThanOrEqual(0.1 * verdict.known);
    }, 120_000);
  }
});
