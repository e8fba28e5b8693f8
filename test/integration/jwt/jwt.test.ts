/**
 * JWTs for other services (docs/machine-access.md): GET /token, GET /jwks, the `set-auth-jwt`
 * header of get-session, keys made on first use, sealed at rest, rotated; and what a resource
 * server refuses, checked with `portcullis/verify` (src/verify).
 */
import { generateKeyPair, SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader, exportJWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JwksKey } from "../../../src/db/entities/index.ts";
import { createVerifier } from "../../../src/verify/index.ts";
import { DAY, MINUTE } from "../../harness/clock.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ jwt: { rotationDays: 1, expirationTime: 3600 } });
});
afterAll(async () => {
  await server.close();
});

const PUBLIC_URL = "http://127.0.0.1:3000";

async function signUp() {
  const email = uniqueEmail("jwt");
  const res = await post(`${server.auth}/sign-up/email`, { name: "J", email, password: "password123" });
  expect(res.status).toBe(200);
  return { token: res.body.token as string, userId: res.body.user.id as string, email };
}

const verifier = () => createVerifier({ issuer: PUBLIC_URL, jwksUrl: `${server.auth}/jwks` });

describe("GET /token and GET /jwks", () => {
  it("signs a short-lived EdDSA token with the session's claims and nothing of the user row beyond email and role", async () => {
    const { token, userId, email } = await signUp();
    const res = await get(`${server.auth}/token`, { bearer: token });
    expect(res.status).toBe(200);
    const jwt = res.body.token as string;
    const header = decodeProtectedHeader(jwt);
    expect(header).toMatchObject({ alg: "EdDSA", typ: "JWT" });
    const claims = decodeJwt(jwt);
    const session = await get(`${server.auth}/get-session`, { bearer: token });
    expect(claims).toEqual({
      sub: userId,
      sid: session.body.session.id,
      email,
      role: "user",
      iss: PUBLIC_URL,
      aud: PUBLIC_URL,
      iat: expect.any(Number),
      exp: (claims.iat as number) + 3600,
    });
    expect(await verifier().verify(jwt)).toMatchObject({ sub: userId, email });
  });

  it("needs a session", async () => {
    const res = await get(`${server.auth}/token`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
  });

  it("publishes public members only, with kid, alg and use, and lets resource servers cache the set", async () => {
    const res = await get(`${server.auth}/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    // jwt.alg's key, and the OpenID provider's RS256 key for ID tokens (docs/oidc-provider.md).
    const byAlg = Object.fromEntries(res.body.keys.map((k: { alg: string }) => [k.alg, k]));
    expect(Object.keys(byAlg).sort()).toEqual(["EdDSA", "RS256"]);
    expect(Object.keys(byAlg.EdDSA).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(byAlg.EdDSA).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(Object.keys(byAlg.RS256).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
  });

  it("keeps the private key sealed at rest (AES-256-GCM envelope, never a JWK in clear)", async () => {
    const rows = await server.portcullis.app.orm.em.fork().find(JwksKey, {});
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.privateKey).toMatch(/^k[A-Za-z0-9_-]+\./);
      expect(row.privateKey).not.toContain('"d"');
      expect(JSON.parse(row.publicKey)).not.toHaveProperty("d");
    }
  });

  it("get-session sends the caller's token in set-auth-jwt, over REST and tRPC, the same token while it is young", async () => {
    const { token, userId } = await signUp();
    const a = await get(`${server.auth}/get-session`, { bearer: token });
    const b = await get(`${server.auth}/get-session`, { bearer: token });
    const jwt = a.headers.get("set-auth-jwt")!;
    expect(decodeJwt(jwt).sub).toBe(userId);
    expect(b.headers.get("set-auth-jwt")).toBe(jwt);
    const trpc = await get(`${server.url}/api/trpc/getSession`, { bearer: token });
    expect(trpc.headers.get("set-auth-jwt")).toBe(jwt);
    expect((await get(`${server.auth}/get-session`)).headers.get("set-auth-jwt")).toBeNull();
  });

  it("a changed user gets a new token with the new claims", async () => {
    const { token } = await signUp();
    const before = (await get(`${server.auth}/get-session`, { bearer: token })).headers.get("set-auth-jwt")!;
    server.clock.advance(1000);
    expect((await post(`${server.auth}/update-user`, { name: "Renamed" }, { bearer: token })).status).toBe(200);
    const after = (await get(`${server.auth}/get-session`, { bearer: token })).headers.get("set-auth-jwt")!;
    expect(after).not.toBe(before);
  });
});

describe("what a resource server refuses", () => {
  let jwt: string;
  beforeAll(async () => {
    const { token } = await signUp();
    jwt = (await get(`${server.auth}/token`, { bearer: token })).body.token;
  });

  it("a token signed by a foreign key under our kid", async () => {
    const { kid } = decodeProtectedHeader(jwt);
    const foreign = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const forged = await new SignJWT(decodeJwt(jwt)).setProtectedHeader({ alg: "EdDSA", kid, typ: "JWT" }).sign(foreign.privateKey);
    await expect(verifier().verify(forged)).rejects.toThrow(/signature/i);
  });

  it("alg none", async () => {
    const unsecured = new UnsecuredJWT(decodeJwt(jwt)).encode();
    await expect(verifier().verify(unsecured)).rejects.toThrow();
  });

  it("a changed payload", async () => {
    const [head, , sig] = jwt.split(".");
    const claims = { ...decodeJwt(jwt), role: "admin" };
    const tampered = `${head}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${sig}`;
    await expect(verifier().verify(tampered)).rejects.toThrow(/signature/i);
  });

  it("a wrong audience or issuer", async () => {
    const otherAudience = createVerifier({ issuer: PUBLIC_URL, audience: "https://billing.example", jwksUrl: `${server.auth}/jwks` });
    await expect(otherAudience.verify(jwt)).rejects.toThrow(/aud/);
    const otherIssuer = createVerifier({ issuer: "https://other.example", jwksUrl: `${server.auth}/jwks` });
    await expect(otherIssuer.verify(jwt)).rejects.toThrow(/iss/);
  });

  it("an expired token", async () => {
    const { token } = await signUp();
    server.clock.advance(-3 * 3600 * 1000);
    try {
      const old = (await get(`${server.auth}/token`, { bearer: token })).body.token as string;
      await expect(verifier().verify(old)).rejects.toThrow(/exp/);
    } finally {
      server.clock.advance(3 * 3600 * 1000);
    }
  });

  it("a token whose header names a JWK of its own (jwk/jku are never followed)", async () => {
    const foreign = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const jwk = await exportJWK(foreign.publicKey);
    const forged = await new SignJWT(decodeJwt(jwt)).setProtectedHeader({ alg: "EdDSA", jwk, typ: "JWT" }).sign(foreign.privateKey);
    await expect(verifier().verify(forged)).rejects.toThrow();
  });
});

describe("rotation", () => {
  it("a new key after rotationDays; old and new tokens both verify until the old key's last token has expired", async () => {
    const { token } = await signUp();
    const oldJwt = (await get(`${server.auth}/token`, { bearer: token })).body.token as string;
    const oldKid = decodeProtectedHeader(oldJwt).kid;
    server.clock.advance(DAY + MINUTE);
    const newJwt = (await get(`${server.auth}/token`, { bearer: token })).body.token as string;
    const newKid = decodeProtectedHeader(newJwt).kid;
    expect(newKid).not.toBe(oldKid);
    const jwtKids = async () => (await get(`${server.auth}/jwks`)).body.keys.filter((k: { alg: string }) => k.alg === "EdDSA").map((k: { kid: string }) => k.kid);
    expect(await jwtKids()).toEqual([newKid, oldKid]);
    const v = verifier();
    await expect(v.verify(oldJwt)).resolves.toMatchObject({ sub: decodeJwt(newJwt).sub });
    await expect(v.verify(newJwt)).resolves.toBeDefined();
    // The old key's tokens live at most the longest lifetime it signs for past its retirement:
    // the OpenID provider's JWT access tokens (an hour), + 60 s skew.
    server.clock.advance(3600 * 1000 - MINUTE);
    expect(await jwtKids()).toContain(oldKid);
    server.clock.advance(3 * MINUTE);
    const after = await jwtKids();
    expect(after).toContain(newKid);
    expect(after).not.toContain(oldKid);
  });
});

describe("several instances on one database", () => {
  it("instances making the first key, and rotating, at the same moment make one key each time", async () => {
    const { createPortcullis } = await import("../../../src/index.ts");
    const { createTestDatabase } = await import("../../harness/database.ts");
    const { FakeClock } = await import("../../harness/clock.ts");
    const db = await createTestDatabase();
    const clock = new FakeClock();
    const config = { databaseUrl: db.url, secret: "test-secret-test-secret-test-secret-0123", logLevel: "silent" as const, clock, jwt: { rotationDays: 1 } };
    const a = await createPortcullis(config);
    const b = await createPortcullis(config, { migrate: false });
    try {
      const { publishedKeys } = await import("../../../src/core/signing-keys.ts");
      // Two algorithms in use (jwt.alg's EdDSA, the ID tokens' RS256): one key each, however many race.
      const first = await Promise.all([publishedKeys(a.app), publishedKeys(b.app), publishedKeys(a.app), publishedKeys(b.app)]);
      expect(new Set(first.map((s) => s.keys.map((k) => k.kid).sort().join()))).toHaveProperty("size", 1);
      expect(first[0]!.keys.map((k) => k.alg).sort()).toEqual(["EdDSA", "RS256"]);
      clock.advance(DAY + MINUTE);
      const rotated = await Promise.all([publishedKeys(a.app), publishedKeys(b.app)]);
      expect(rotated[0]!.keys).toHaveLength(4);
      expect(rotated[1]!.keys.map((k) => k.kid)).toEqual(rotated[0]!.keys.map((k) => k.kid));
      const rows = await a.app.orm.em.fork().find(JwksKey, {}, { orderBy: { epoch: "asc" } });
      expect(rows.map((r) => r.epoch)).toEqual([1, 2, 3, 4]);
      expect(rows.map((r) => r.alg).sort()).toEqual(["EdDSA", "EdDSA", "RS256", "RS256"]);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});

describe("algorithms", () => {
  it("ES256 and RS256 keys sign tokens the verifier accepts; changing jwt.alg rotates to a key of the new algorithm at once", async () => {
    const { createTestDatabase } = await import("../../harness/database.ts");
    const { createPortcullis } = await import("../../../src/index.ts");
    const db = await createTestDatabase();
    const base = { databaseUrl: db.url, secret: "test-secret-test-secret-test-secret-0123", logLevel: "silent" as const, rateLimit: { enabled: false } };
    const seen: string[] = [];
    try {
      for (const alg of ["ES256", "RS256", "EdDSA"] as const) {
        const p = await createPortcullis({ ...base, jwt: { alg } });
        const url = await p.listen(0, "127.0.0.1");
        try {
          const up = await post(`${url}/api/auth/sign-up/email`, { name: "A", email: uniqueEmail(alg), password: "password123" });
          const jwt = (await get(`${url}/api/auth/token`, { bearer: up.body.token })).body.token as string;
          expect(decodeProtectedHeader(jwt).alg).toBe(alg);
          const claims = await createVerifier({ issuer: PUBLIC_URL, jwksUrl: `${url}/api/auth/jwks` }).verify(jwt);
          expect(claims.sub).toBe(up.body.user.id);
          seen.push(decodeProtectedHeader(jwt).kid!);
        } finally {
          await p.close();
        }
      }
      expect(new Set(seen).size).toBe(3);
    } finally {
      await db.drop();
    }
  });
});
