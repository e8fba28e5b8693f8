import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, getJson, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * Two server PROCESSES on one database: a session made on one works on the other,
 * a revoke on one is seen at once by the other, and the rate limit is shared (storage
 * "database"). On PostgreSQL as deployed; on SQLite too (two processes on one file, WAL).
 * The session cache is off (cacheTtlMs 0: PostgreSQL's default; SQLite's default of 1 s
 * would let the other process serve a revoked session for up to a second).
 */

let db: TestDatabase;
let config: ReturnType<typeof configFile>;
let a: ServerProcess;
let b: ServerProcess;
const PASSWORD = "multi-instance-pw-1";

beforeAll(async () => {
  db = await createTestDatabase();
  config = configFile({ session: { cacheTtlMs: 0 }, rateLimit: { enabled: true, storage: "database" }, trustProxy: true, logLevel: "warn" });
  // One after the other: the first applies the migrations (see the report: concurrent first starts race on them).
  a = await startServerProcess({ databaseUrl: db.url, config: config.path });
  b = await startServerProcess({ databaseUrl: db.url, config: config.path });
}, 120_000);

afterAll(async () => {
  for (const p of [a, b]) p?.kill("SIGTERM");
  const codes = await Promise.race([
    Promise.all([a?.exited, b?.exited]),
    new Promise<string[]>((r) => setTimeout(() => r(["still running after 15 s"]), 15_000)),
  ]);
  killAll();
  config?.remove();
  await db?.drop();
  expect(codes, `${a?.output()}\n${b?.output()}`).toEqual([0, 0]);
}, 60_000);

let ipCounter = 0;
const ip = () => ({ "x-forwarded-for": `198.18.${testDialect === "sqlite" ? 1 : 2}.${++ipCounter}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe(`two server processes on one ${testDialect} database`, () => {
  it("a session made on one works on the other; a revoke on one is seen by the other at once", async () => {
    const email = `multi.${Date.now().toString(36)}@example.test`;
    const up = await postJson(`${a.auth}/sign-up/email`, { name: "Multi", email, password: PASSWORD }, ip());
    expect(up.status).toBe(200);
    const token = up.headers.get("set-auth-token")!;
    const onB = await getJson(`${b.auth}/get-session`, bearer(token));
    expect(onB.status).toBe(200);
    expect(onB.body.user.email).toBe(email);

    // a second session, made on B, revoked on A: B refuses it on the very next request
    const signIn = await postJson(`${b.auth}/sign-in/email`, { email, password: PASSWORD }, ip());
    expect(signIn.status).toBe(200);
    const second = signIn.headers.get("set-auth-token")!;
    const idOnB = (await getJson(`${b.auth}/get-session`, bearer(second))).body.session.id;
    expect((await getJson(`${a.auth}/get-session`, bearer(second))).body.session.id).toBe(idOnB);
    expect((await postJson(`${a.auth}/revoke-session`, { token: second }, { ...bearer(token), ...ip() })).status).toBe(200);
    expect((await getJson(`${b.auth}/get-session`, bearer(second))).body).toBeNull();
    // the first session is untouched on both
    expect((await getJson(`${a.auth}/get-session`, bearer(token))).body.user.email).toBe(email);
    expect((await getJson(`${b.auth}/get-session`, bearer(token))).body.user.email).toBe(email);

    // sign-out on B ends the first session for A too
    expect((await postJson(`${b.auth}/sign-out`, {}, bearer(token))).status).toBe(200);
    expect((await getJson(`${a.auth}/get-session`, bearer(token))).body).toBeNull();
  });

  it("the rate limit is shared: the 4th sign-in from one IP across both processes is 429", async () => {
    const client = ip();
    const statuses: number[] = [];
    for (const p of [a, b, a, b]) {
      statuses.push((await postJson(`${p.auth}/sign-in/email`, { email: "nobody@example.test", password: PASSWORD }, client)).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    const over = await postJson(`${a.auth}/sign-in/email`, { email: "nobody@example.test", password: PASSWORD }, client);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe("RATE_LIMITED");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // another client on either process is not limited
    expect((await postJson(`${b.auth}/sign-in/email`, { email: "nobody@example.test", password: PASSWORD }, ip())).status).toBe(401);
  });

  it("both answer ready", async () => {
    for (const p of [a, b]) expect((await getJson(`${p.auth}/ready`)).body).toEqual({ ok: true });
  });
});
