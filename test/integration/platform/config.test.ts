import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type PortcullisConfig } from "../../../src/index.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { freePort } from "../../process/harness.ts";

/** Config validation (createPortcullis rejects bad configs, naming the key) and basePath. */

async function rejection(config: unknown): Promise<Error> {
  // The config is validated before any database is opened; should it be accepted after all, the
  // database is a temp file removed right away.
  const file = join(tmpdir(), `pc_config_${process.pid}_${Date.now().toString(36)}.db`);
  const err = await createPortcullis({ databaseUrl: `sqlite:${file}`, logLevel: "silent", ...(config as PortcullisConfig) }).then(
    async (p) => {
      await p.close();
      return new Error(`config was accepted: ${JSON.stringify(config)}`);
    },
    (e: unknown) => e,
  );
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  expect((err as Error).message).not.toMatch(/^config was accepted/);
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe("invalid configs are rejected, naming the bad key", () => {
  const cases: [string, unknown, RegExp][] = [
    ["port as a string", { port: "x" }, /\bport\b/],
    ["port out of range", { port: 70000 }, /\bport\b/],
    ["basePath without a leading slash", { basePath: "nope" }, /\bbasePath\b/],
    ["basePath with a trailing slash", { basePath: "/auth/" }, /\bbasePath\b/],
    ["an unknown top-level key", { bogusOption: true }, /bogusOption/],
    ["an unknown nested key", { session: { expiresIn: 5 } }, /expiresIn/],
    ["a short secret", { secret: "short" }, /\bsecret\b/],
    ["a publicUrl without a scheme", { publicUrl: "localhost:3000" }, /\bpublicUrl\b/],
    ["a publicUrl that is not a URL", { publicUrl: "not a url" }, /\bpublicUrl\b/],
    ["a bad trusted origin", { trustedOrigins: ["not a url"] }, /\btrustedOrigins\b/],
    ["an unknown database scheme", { databaseUrl: "mysql://x" }, /\bdatabaseUrl\b/],
    ["a bad rate-limit rule", { rateLimit: { rules: { "/sign-in/email": { window: 10, max: 0 } } } }, /rateLimit\.rules/],
    ["a bad rate-limit storage", { rateLimit: { storage: "memcached" } }, /rateLimit\.storage/],
    ["a bad log level", { logLevel: "loud" }, /\blogLevel\b/],
  ];
  for (const [title, config, key] of cases) {
    it(title, async () => {
      const err = await rejection(config);
      expect(err.message).toMatch(key);
      expect(err.message).toMatch(/config/i);
    });
  }

  it("every bad key is named at once", async () => {
    const err = await rejection({ port: "x", basePath: "nope", secret: "short" });
    expect(err.message).toMatch(/\bport\b/);
    expect(err.message).toMatch(/\bbasePath\b/);
    expect(err.message).toMatch(/\bsecret\b/);
  });
});

describe("NODE_ENV=production", () => {
  const saved = process.env.NODE_ENV;
  afterEach(() => {
    if (saved === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = saved;
  });

  it("without a secret the service refuses to start, mentioning AUTH_SECRET", async () => {
    process.env.NODE_ENV = "production";
    const err = await rejection({});
    expect(err.message).toContain("AUTH_SECRET");
    expect(err.message).toMatch(/\bsecret\b/);
  });

  it("metrics on the public port need metrics.port, metrics.token or metrics.public: true", async () => {
    process.env.NODE_ENV = "production";
    const secret = "a-production-secret-of-enough-length-0123";
    const err = await rejection({ secret, metrics: { enabled: true } });
    expect(err.message).toMatch(/metrics\.enabled: would serve the metrics on the service's public port to anyone/);
    expect(err).toMatchObject({ issues: [{ key: "metrics.enabled", fix: expect.stringMatching(/metrics\.port.*metrics\.token.*metrics\.public: true/) }] });
    const port = await freePort();
    for (const metrics of [{ port }, { token: "metrics-token-metrics-token-0123456789" }, { public: true }]) {
      const server = await startTestServer({ secret, metrics: { enabled: true, ...metrics } });
      await server.close();
    }
  });

  it("with a secret it starts", async () => {
    process.env.NODE_ENV = "production";
    const server = await startTestServer({ secret: "a-production-secret-of-enough-length-0123" });
    try {
      expect((await get(`${server.auth}/ok`)).body).toEqual({ ok: true });
    } finally {
      await server.close();
    }
  });
});

describe("a custom basePath", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ basePath: "/auth" });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves the bridge under it, and not under /api/auth", async () => {
    expect(server.auth).toBe(`${server.url}/auth`);
    const ok = await get(`${server.url}/auth/ok`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true });

    const up = await post(`${server.url}/auth/sign-up/email`, { name: "Base", email: uniqueEmail("base"), password: "password123" });
    expect(up.status, up.text).toBe(200);
    const s = await get(`${server.url}/auth/get-session`, { bearer: up.body.token });
    expect(s.body.user.id).toBe(up.body.user.id);

    const old = await get(`${server.url}/api/auth/ok`);
    expect(old.status).toBe(404);
    expect(old.body).toMatchObject({ code: "NOT_FOUND" });
    expect((await get(`${server.url}/authx/ok`)).status).toBe(404);
  });

  it("tRPC stays at /api/trpc", async () => {
    const res = await get(`${server.url}/api/trpc/ok`);
    expect(res.body).toEqual({ result: { data: { ok: true } } });
  });
});
