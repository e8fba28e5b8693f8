import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEnv, ConfigError, resolveConfig } from "../../../src/config/index.ts";
import { deriveKey, keyId } from "../../../src/crypto/aead.ts";
import { Account } from "../../../src/db/entities/index.ts";
import { createPortcullis, type Portcullis } from "../../../src/index.ts";
import { FakeClock, HOUR, SECOND } from "../../harness/clock.ts";
import { createTestDatabase, type TestDatabase } from "../../harness/database.ts";
import { post } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import type { TestServer } from "../../harness/server.ts";
import { browserFlow, callbackUri, expectError, oidcProviders, PUBLIC_URL, tokenOf } from "../../harness/oauth-helpers.ts";

/** `secrets` / AUTH_SECRETS, newest first; provider tokens survive a rotation. */

const A = "secret-A-secret-A-secret-A-secret-A-0001";
const B = "secret-B-secret-B-secret-B-secret-B-0002";
const idOf = (secret: string) => `k${keyId(deriveKey(secret))}.`;

let oidc: TestOidcProvider;
let db: TestDatabase;
const clock = new FakeClock();
const running: Portcullis[] = [];

/** An instance on the shared database (a restart with other secrets), sharing one clock. */
async function start(secrets: { secret?: string; secrets?: string[] }): Promise<TestServer> {
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    logLevel: "silent",
    clock,
    rateLimit: { enabled: false },
    publicUrl: PUBLIC_URL,
    providers: oidcProviders(oidc),
    ...secrets,
  });
  running.push(portcullis);
  const url = await portcullis.listen(0, "127.0.0.1");
  return { url, auth: `${url}/api/auth`, portcullis, clock, db, close: () => portcullis.close() };
}

async function stop(server: TestServer) {
  await server.close();
  running.splice(running.indexOf(server.portcullis), 1);
}

let n = 0;
async function socialUser(server: TestServer) {
  n += 1;
  const sub = `rot-${Date.now().toString(36)}-${n}`;
  oidc.setAccount({ sub, email: `${sub}@example.test`, email_verified: true, name: `Rotation ${n}` });
  const { cookie, callback } = await browserFlow(server, oidc, "oidc", sub);
  expect(cookie, callback.text).not.toBeNull();
  return { sub, token: tokenOf(cookie!) };
}

async function storedTokens(server: TestServer, sub: string) {
  const row = await server.portcullis.app.orm.em.fork().findOneOrFail(Account, { providerId: "oidc", accountId: sub });
  return [row.accessToken, row.refreshToken, row.idToken].filter((v): v is string => typeof v === "string");
}

const accessToken = (server: TestServer, bearer: string) => post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { bearer });

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [callbackUri("oidc")] });
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const p of running.splice(0)) await p.close().catch(() => {});
  await db?.drop();
  await oidc?.close();
});

describe("secret rotation", () => {
  it("tokens sealed under A open under [B, A], move to B on the next write, and fail cleanly under [B] alone", async () => {
    let server = await start({ secret: A });
    const moved = await socialUser(server);
    const left = await socialUser(server);
    const first = await accessToken(server, moved.token);
    expect(first.status, first.text).toBe(200);
    const sealedUnderA = await storedTokens(server, moved.sub);
    expect(sealedUnderA.length).toBe(3);
    for (const envelope of sealedUnderA) expect(envelope.startsWith(idOf(A))).toBe(true);
    await stop(server);

    // Rotation step 1: B prepended. A's tokens still open; nothing is rewritten by reading.
    server = await start({ secrets: [B, A] });
    expect(server.portcullis.app.secrets).toEqual([B, A]);
    expect(server.portcullis.app.secret).toBe(B);
    const read = await accessToken(server, moved.token);
    expect(read.status, read.text).toBe(200);
    expect(read.body.accessToken).toBe(first.body.accessToken);
    expect((await accessToken(server, left.token)).status).toBe(200);
    expect(await storedTokens(server, moved.sub)).toEqual(sealedUnderA);

    // The next write (a refresh within 5 s of expiry) seals every column under B.
    clock.advance(HOUR - 4 * SECOND);
    const refreshed = await accessToken(server, moved.token);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.accessToken).not.toBe(first.body.accessToken);
    const sealedUnderB = await storedTokens(server, moved.sub);
    expect(sealedUnderB.length).toBe(3);
    for (const envelope of sealedUnderB) expect(envelope.startsWith(idOf(B)), envelope.slice(0, 14)).toBe(true);
    await stop(server);

    // Rotation step 2: A dropped. Rewritten tokens open; A's leftovers fail cleanly, not 500.
    server = await start({ secrets: [B] });
    const after = await accessToken(server, moved.token);
    expect(after.status, after.text).toBe(200);
    expect(after.body.accessToken).toBe(refreshed.body.accessToken);
    expectError(await accessToken(server, left.token), 400, "FAILED_TO_GET_ACCESS_TOKEN");
    expectError(await post(`${server.auth}/refresh-token`, { providerId: "oidc" }, { bearer: left.token }), 400, "FAILED_TO_GET_ACCESS_TOKEN");
    // A new sign-in of that user stores fresh tokens under B, and they open again.
    const again = await browserFlow(server, oidc, "oidc", left.sub);
    expect(again.cookie, again.callback.text).not.toBeNull();
    expect((await accessToken(server, tokenOf(again.cookie!))).status).toBe(200);
    await stop(server);
  });
});

describe("secrets config", () => {
  const invalid = (config: Parameters<typeof resolveConfig>[0]) => () => resolveConfig(config);

  it("accepts `secrets` newest first and `secret` as the shorthand for one", () => {
    expect(resolveConfig({ secrets: [B, A] }).secrets).toEqual([B, A]);
    expect(resolveConfig({ secret: A }).secret).toBe(A);
  });

  it("refuses both at once, a short secret, an empty list and a repeated secret", () => {
    expect(invalid({ secret: A, secrets: [B] })).toThrow(/either secret .* or secrets/);
    expect(invalid({ secrets: [B, "too-short"] })).toThrow(/secrets\.1: must be at least 32 characters/);
    expect(invalid({ secrets: [] })).toThrow(/secrets: needs at least one secret/);
    expect(invalid({ secrets: [A, A] })).toThrow(/secrets: lists a secret twice/);
  });

  it("AUTH_SECRETS (comma-separated, newest first) or AUTH_SECRET replace the config's secrets; both at once is an error", () => {
    expect(resolveConfig(applyEnv({ secret: A }, { AUTH_SECRETS: ` ${B} , ${A} ` })).secrets).toEqual([B, A]);
    expect(resolveConfig(applyEnv({ secret: A }, { AUTH_SECRETS: ` ${B} , ${A} ` })).secret).toBeUndefined();
    const single = resolveConfig(applyEnv({ secrets: [A] }, { AUTH_SECRET: B }));
    expect([single.secret, single.secrets]).toEqual([B, undefined]);
    expect(() => applyEnv({}, { AUTH_SECRET: A, AUTH_SECRETS: B })).toThrow(ConfigError);
    expect(() => resolveConfig(applyEnv({}, { AUTH_SECRETS: `${B},short` }))).toThrow(/secrets\.1: must be at least 32 characters/);
  });
});
