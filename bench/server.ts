/**
 * The Portcullis server under test, in its own process (bench/run.ts forks it).
 * SQLite file from BENCH_DB (a temp file by default), rate limits off, silent logs.
 * Seeds BENCH_USERS users (default 2,000), each with a credential account and one live session,
 * through the ORM: the password is hashed ONCE and that hash is reused for every account.
 * BENCH_SESSION_CACHE_TTL_MS overrides the session cache TTL (0 turns the cache off).
 * Prints one JSON line on stdout: { ready, url, token, apiKey (the same user's), signIn: { email, password }, ... }.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPortcullis } from "../src/index.ts";
import { hashPassword } from "../src/crypto/password.ts";
import { randomToken, sha256 } from "../src/crypto/tokens.ts";
import { Account, OauthAccessToken, OauthCode, OauthRefreshToken, Session, User } from "../src/db/entities/index.ts";
import { createClient } from "../src/modules/oidc-provider/clients.ts";
import { reportReady, serveProbe } from "./probe.ts";

export const SIGN_IN_EMAIL = "bench-signin@example.com";
export const SIGN_IN_PASSWORD = "bench-password-123";

const users = Number(process.env.BENCH_USERS ?? 2000);
let tmpDir: string | undefined;
let dbFile = process.env.BENCH_DB;
if (!dbFile) {
  tmpDir = mkdtempSync(join(tmpdir(), "portcullis-bench-"));
  dbFile = join(tmpDir, "bench.db");
}

// BENCH_SESSION_CACHE_TTL_MS overrides the session cache TTL (0 = off); unset = the server's default.
const cacheTtlEnv = process.env.BENCH_SESSION_CACHE_TTL_MS;
const portcullis = await createPortcullis({
  databaseUrl: `sqlite:${dbFile}`,
  ...(cacheTtlEnv ? { session: { cacheTtlMs: Number(cacheTtlEnv) } } : {}),
  rateLimit: { enabled: false },
  logLevel: "silent",
  secret: "bench-secret-bench-secret-bench-secret-0123456789",
});

const seedStarted = performance.now();
const passwordHash = await hashPassword(SIGN_IN_PASSWORD);
const { expiresInSec } = portcullis.app.config.session;
const tokens: string[] = [];
const BATCH = 500;
for (let start = 0; start < users; start += BATCH) {
  // Native inserts: no unit-of-work flush, which would switch on MikroORM's AsyncLocalStorage
  // in this process (the service itself never flushes, see src/db/transaction.ts).
  const em = portcullis.app.orm.em.fork();
  const now = new Date();
  const batch = { users: [] as object[], accounts: [] as object[], sessions: [] as object[] };
  for (let i = start; i < Math.min(users, start + BATCH); i++) {
    const id = randomUUID();
    const email = i === 0 ? SIGN_IN_EMAIL : `bench-user-${i}@example.com`;
    batch.users.push({
      id, email, emailVerified: true, name: `Bench User ${i}`, image: null, username: null,
      displayUsername: null, role: "user", banned: false, createdAt: now, updatedAt: now,
    });
    batch.accounts.push({
      id: randomUUID(), user: id, providerId: "credential", accountId: id, password: passwordHash,
      createdAt: now, updatedAt: now,
    });
    const token = randomToken();
    tokens.push(token);
    batch.sessions.push({
      id: randomUUID(), tokenHash: sha256(token), user: id,
      // Freshly extended: get-session stays read-only for the whole run (no sliding-expiry write).
      expiresAt: new Date(now.getTime() + expiresInSec * 1000), rememberMe: true,
      ipAddress: "127.0.0.1", userAgent: "portcullis-bench", impersonatedBy: null, createdAt: now, updatedAt: now,
    });
  }
  await em.insertMany(User, batch.users as never[]);
  await em.insertMany(Account, batch.accounts as never[]);
  await em.insertMany(Session, batch.sessions as never[]);
}
const seedMs = performance.now() - seedStarted;
// An API key of the reported token's user, without limits: get-session by key vs by Bearer (docs/performance.md).
const middle = Math.floor(tokens.length / 2);
const middleSession = await portcullis.app.orm.em.fork().findOneOrFail(Session, { tokenHash: sha256(tokens[middle]!) });
const apiKey = (await portcullis.createApiKey({ userId: middleSession.user.id, name: "bench", rateLimitEnabled: false })).key;

// The OpenID provider's rows: a confidential client (client credentials at the token endpoint) and
// an access token with `openid email profile` of a seeded user (userinfo), not bound to a session.
const oauthEm = portcullis.app.orm.em.fork();
const rp = await createClient(portcullis.app, oauthEm, { name: "bench", redirectUris: ["https://rp.example.test/cb"], grantTypes: ["authorization_code", "refresh_token", "client_credentials"], authMethod: "client_secret_basic" });
const oauthUser = await oauthEm.findOneOrFail(User, { email: SIGN_IN_EMAIL });
const oauthAccessToken = randomToken();
await oauthEm.insert(OauthAccessToken, {
  id: randomUUID(), tokenHash: sha256(oauthAccessToken), clientId: rp.client.clientId, user: oauthUser.id as never, sessionId: null, grantId: null,
  scopes: "openid email profile", resource: null, expiresAt: new Date(Date.now() + 24 * 3600 * 1000), revokedAt: null, createdAt: new Date(),
});

// Codes and refresh tokens are single-use: pools, as the authorize flow and a code exchange would
// leave them (`openid offline_access` of a seeded session, PKCE S256 of one verifier), each the
// `pool.prefix` and its index, so that bench/run.ts names the next one without a list crossing
// the pipe. Valid an hour: a measurement comes minutes after the seeding.
const oauthPool = Number(process.env.BENCH_OAUTH_POOL ?? 0);
const poolPrefix = randomToken(16);
const PKCE_VERIFIER = "bench-pkce-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
if (oauthPool > 0) {
  const now = new Date();
  const later = new Date(now.getTime() + 3600 * 1000);
  const challenge = createHash("sha256").update(PKCE_VERIFIER).digest("base64url");
  const common = { clientId: rp.client.clientId, user: middleSession.user.id as never, scopes: "openid offline_access", resource: null, authTime: now, amr: "pwd", acr: null, expiresAt: later, usedAt: null, createdAt: now };
  for (let start = 0; start < oauthPool; start += 1000) {
    const codes = [];
    const refreshTokens = [];
    for (let i = start; i < Math.min(start + 1000, oauthPool); i++) {
      codes.push({ ...common, id: randomUUID(), codeHash: sha256(`${poolPrefix}-c${i}`), sessionId: middleSession.id, redirectUri: "https://rp.example.test/cb", codeChallenge: challenge, nonce: null, claims: null });
      refreshTokens.push({ ...common, id: randomUUID(), tokenHash: sha256(`${poolPrefix}-r${i}`), sessionId: middleSession.id, grantId: randomUUID(), revokedAt: null });
    }
    await oauthEm.insertMany(OauthCode, codes as never[]);
    await oauthEm.insertMany(OauthRefreshToken, refreshTokens as never[]);
  }
}

const url = await portcullis.listen(Number(process.env.BENCH_PORT ?? 0), "127.0.0.1");
serveProbe(async () => {
  await portcullis.close();
  if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
});
reportReady({
  url,
  dbFile,
  users,
  seedMs: Math.round(seedMs),
  // A token from the middle of the seeded set, so the lookup is not a best case.
  token: tokens[middle],
  apiKey,
  signIn: { email: SIGN_IN_EMAIL, password: SIGN_IN_PASSWORD },
  oauth: { accessToken: oauthAccessToken, basic: Buffer.from(`${rp.client.clientId}:${rp.secret}`).toString("base64"), pool: { prefix: poolPrefix, size: oauthPool, verifier: PKCE_VERIFIER, redirectUri: "https://rp.example.test/cb" } },
  publicUrl: portcullis.app.config.publicUrl,
  cookieName: portcullis.app.cookieName,
  threadPoolSize: Number(process.env.UV_THREADPOOL_SIZE) || 4,
  // Effective TTL of the in-process session cache (null if this build has none).
  sessionCacheTtlMs: (portcullis.app as { sessionCache?: { ttlMs?: number } }).sessionCache?.ttlMs ?? null,
});
