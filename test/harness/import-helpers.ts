/**
 * A REAL better-auth 1.6 database to import: better-auth itself (username, admin, two-factor and
 * bearer plugins, as test/compat/better-auth-target.ts runs it) migrates it with its own migrator
 * and writes every row through its own API and internal adapter: sign-ups (scrypt hashes),
 * sign-ins (sessions, the signed `set-auth-token`), a reset request (a verification row), an
 * OAuth-style user with provider tokens, a ban, an expired session, an OAuth state in flight.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { betterAuth, type BetterAuthOptions } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { admin, bearer, twoFactor, username } from "better-auth/plugins";
import { POSTGRES_ADMIN_URL } from "./database.ts";

export const BETTER_AUTH_SECRET = "better-auth-app-secret-0123456789-abcdefgh";

export interface SourceUser {
  id: string;
  email: string;
  password: string;
}

export interface BetterAuthSource {
  /** What `--from` takes: sqlite:<file> or postgres://… */
  url: string;
  alice: SourceUser & { username: string; displayUsername: string };
  bob: SourceUser;
  carol: { id: string; email: string; accessToken: string; refreshToken: string; sessionToken: string };
  dave: SourceUser;
  /** Two-factor on in better-auth (a twoFactor row, not imported). */
  erin: SourceUser;
  /** alice's sessions: the bare token (better-auth's get-session `session.token`) and the signed one (`set-auth-token`, the cookie's value). */
  aliceSession: { raw: string; signed: string };
  /** bob's password reset link token, as mailed by better-auth. */
  bobResetToken: string;
  counts: { user: number; account: number; session: number; verification: number };
  drop(): Promise<void>;
}

export async function pgAnswers(): Promise<boolean> {
  const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

async function sourceDatabase(dialect: "sqlite" | "postgres") {
  const name = `ba_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  if (dialect === "sqlite") {
    const file = join(tmpdir(), `${name}.db`);
    const db = new Database(file);
    return {
      url: `sqlite:${file}`,
      database: db as BetterAuthOptions["database"],
      close: async () => db.close(),
      drop: async () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  const adminClient = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${name}`);
  await adminClient.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString() });
  return {
    url: url.toString(),
    database: pool as BetterAuthOptions["database"],
    close: () => pool.end(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function buildBetterAuthSource(dialect: "sqlite" | "postgres"): Promise<BetterAuthSource> {
  const db = await sourceDatabase(dialect);
  let resetToken = "";
  const options = {
    baseURL: "http://127.0.0.1:3999",
    basePath: "/api/auth",
    secret: BETTER_AUTH_SECRET,
    database: db.database,
    logger: { disabled: true },
    telemetry: { enabled: false },
    rateLimit: { enabled: false },
    emailAndPassword: {
      enabled: true,
      sendResetPassword: async ({ token }: { token: string }) => {
        resetToken = token;
      },
    },
    plugins: [username(), admin(), twoFactor(), bearer()],
  } satisfies BetterAuthOptions;
  await (await getMigrations(options)).runMigrations();
  const auth = betterAuth(options);
  const ctx = await auth.$context;

  const signUp = async (body: Record<string, string>) => {
    const res = await auth.api.signUpEmail({ body: body as never, asResponse: true });
    if (res.status !== 200) throw new Error(`better-auth sign-up ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { user: { id: string } }).user.id;
  };
  const alice = { email: "alice@example.com", password: "alice-old-password", username: "alice_w", displayUsername: "Alice_W" };
  const bob = { email: "bob@example.com", password: "bob-old-password" };
  const dave = { email: "dave@example.com", password: "dave-old-password" };
  const erin = { email: "erin@example.com", password: "erin-old-password" };
  const aliceId = await signUp({ name: "Alice", email: alice.email, password: alice.password, username: alice.displayUsername });
  const bobId = await signUp({ name: "Bob", email: bob.email, password: bob.password });
  const daveId = await signUp({ name: "Dave", email: dave.email, password: dave.password });
  const erinId = await signUp({ name: "Erin", email: erin.email, password: erin.password });
  await ctx.internalAdapter.updateUser(erinId, { twoFactorEnabled: true });
  await ctx.adapter.create({ model: "twoFactor", data: { userId: erinId, secret: "sealed-by-better-auth", backupCodes: "sealed-by-better-auth", verified: true } });
  await ctx.internalAdapter.updateUser(aliceId, { role: "admin" });
  await ctx.internalAdapter.updateUser(daveId, { banned: true, banReason: "spam", banExpires: new Date(Date.now() + 30 * 86400_000) });

  // alice signs in: the bearer plugin's set-auth-token is the signed token, get-session names the bare one.
  const signIn = await auth.api.signInEmail({ body: { email: alice.email, password: alice.password }, asResponse: true });
  const signed = signIn.headers.get("set-auth-token")!;
  const session = await auth.api.getSession({ headers: new Headers({ authorization: `Bearer ${signed}` }) });
  const raw = session!.session.token;

  // carol came through an OAuth provider: a user, a github account with tokens, a session.
  const carolUser = await ctx.internalAdapter.createUser({ name: "Carol", email: "carol@example.com", emailVerified: true, image: "https://avatars.example.com/carol.png" });
  const carol = { accessToken: "gho_carol_access_token_0123456789", refreshToken: "ghr_carol_refresh_token_0123456789" };
  await ctx.internalAdapter.linkAccount({
    userId: carolUser.id,
    providerId: "github",
    accountId: "4242",
    accessToken: carol.accessToken,
    refreshToken: carol.refreshToken,
    accessTokenExpiresAt: new Date(Date.now() + 8 * 3600_000),
    scope: "read:user,user:email",
  });
  const carolSession = await ctx.internalAdapter.createSession(carolUser.id);

  // bob asks for a reset (a verification row); an expired session; an OAuth state in flight.
  await auth.api.requestPasswordReset({ body: { email: bob.email, redirectTo: "/reset" } });
  const old = await ctx.internalAdapter.createSession(bobId);
  await ctx.internalAdapter.updateSession(old.token, { expiresAt: new Date(Date.now() - 60_000) });
  await ctx.internalAdapter.createVerificationValue({
    identifier: randomBytes(16).toString("hex"),
    value: JSON.stringify({ callbackURL: "/", codeVerifier: "v".repeat(43), expiresAt: Date.now() + 600_000 }),
    expiresAt: new Date(Date.now() + 600_000),
  });
  await db.close();

  return {
    url: db.url,
    alice: { id: aliceId, ...alice },
    bob: { id: bobId, ...bob },
    dave: { id: daveId, ...dave },
    erin: { id: erinId, ...erin },
    carol: { id: carolUser.id, email: "carol@example.com", ...carol, sessionToken: carolSession.token },
    aliceSession: { raw, signed },
    bobResetToken: resetToken,
    // users: alice, bob, dave, erin, carol; accounts: 4 credential + github; sessions: sign-up x4, alice's sign-in, carol,
    // bob's expired; verifications: bob's reset, the OAuth state.
    counts: { user: 5, account: 5, session: 7, verification: 2 },
    drop: db.drop,
  };
}
