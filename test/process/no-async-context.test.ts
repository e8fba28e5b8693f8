import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/modules/two-factor/totp.ts";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { cookieFrom, request, type Reply, type RequestOptions } from "../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../harness/oidc.ts";
import { linkFrom, startSmtpSink, type ReceivedMail, type SmtpSink } from "../harness/smtp.ts";
import { SoftAuthenticator } from "../harness/webauthn.ts";
import { Browser, oidcProviders } from "../harness/oauth-helpers.ts";
import { configFile, killAll, SECRET, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * No AsyncLocalStorage in the serving process. On Node 20 the first
 * AsyncLocalStorage#run or #enterWith switches promise hooks on for the life of the process, and
 * every promise pays for them; MikroORM does it in em.transactional, em.flush and findAndCount.
 * The compiled service (bin/portcullis.cjs serve) runs under a probe loaded with `node --import`
 * (async-context-probe.mjs) that records each activation with its stack; the flows below, over
 * real HTTP, take at least one path through every module family that writes (and the
 * migrations at start). Not one activation may show up.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PROBE = join(ROOT, "test/process/async-context-probe.mjs");
/** The service's public URL (links, cookies, CSRF, OAuth redirect URI); requests go to the real port. */
const PUBLIC_URL = "http://127.0.0.1:3000";
const PASSWORD = "no-async-context-pw-1";
const NEW_PASSWORD = "no-async-context-pw-2";

let db: TestDatabase;
let sink: SmtpSink;
let oidc: TestOidcProvider;
let config: ReturnType<typeof configFile>;
let server: ServerProcess;
let probeDir: string;
let probeFile: string;

interface Activation {
  kind: string;
  pid: number;
  stack: string;
}

/** What the probe recorded in the serving process (its "loaded" line first), and how much of it has been attributed to a step. */
let seen = 1;
const activations: { step: string; activation: Activation }[] = [];

/**
 * The serving process's lines only: `serve` passes its node flags (the probe's `--import` too) to
 * the `migrate` process it runs first, whose MikroORM migrator may use AsyncLocalStorage freely.
 */
function probeLines(): Activation[] {
  if (!existsSync(probeFile)) return [];
  const lines = readFileSync(probeFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Activation);
  return lines.filter((l) => l.pid === server.child.pid);
}

/** Runs one flow, then attributes whatever the probe recorded meanwhile to it. */
async function step(name: string, flow: () => Promise<void>): Promise<void> {
  await flow();
  const lines = probeLines();
  for (const activation of lines.slice(seen)) activations.push({ step: name, activation });
  seen = lines.length;
}

/** `portcullis create-admin` in its own process, as an operator makes the first admin. */
function createAdmin(email: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/portcullis.cjs"), "create-admin", "--email", email, "--config", config.path], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.url, AUTH_SECRET: SECRET, NODE_ENV: "production", PORTCULLIS_ADMIN_PASSWORD: PASSWORD },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => (code === 0 ? resolvePromise() : reject(new Error(`create-admin exited ${code}:\n${out}`))));
  });
}

const RULE = { window: 10, max: 1000 };

beforeAll(async () => {
  db = await createTestDatabase();
  sink = await startSmtpSink();
  oidc = await startOidcProvider({ redirectUris: [`${PUBLIC_URL}/api/auth/callback/google`] });
  probeDir = mkdtempSync(join(tmpdir(), "pc-async-probe-"));
  probeFile = join(probeDir, "activations.jsonl");
  config = configFile({
    publicUrl: PUBLIC_URL,
    logLevel: "warn",
    email: { smtpUrl: sink.url },
    // On, with the default store of the dialect (the database on PostgreSQL): its writes run too.
    rateLimit: {
      enabled: true,
      max: 10_000,
      rules: Object.fromEntries(["/sign-in/*", "/sign-up/*", "/change-password", "/verify-password", "/change-email", "/request-password-reset", "/send-verification-email", "/two-factor/*"].map((p) => [p, RULE])),
    },
    user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } },
    providers: { google: oidcProviders(oidc).google },
  });
  server = await startServerProcess({
    databaseUrl: db.url,
    config: config.path,
    nodeArgs: ["--import", PROBE],
    env: { PORTCULLIS_ASYNC_PROBE_FILE: probeFile },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  killAll();
  config?.remove();
  await oidc?.close();
  await sink?.close();
  await db?.drop();
  if (probeDir) rmSync(probeDir, { recursive: true, force: true });
}, 60_000);

// --- HTTP against the server process ---

const at = (path: string) => `${server.auth}${path}`;
const call = (method: string, path: string, opts: RequestOptions = {}) => request(method, at(path), opts);
const post = (path: string, json: unknown = {}, opts: RequestOptions = {}) => call("POST", path, { ...opts, json });
const get = (path: string, opts: RequestOptions = {}) => call("GET", path, opts);

function ok(reply: Reply, status = 200): Reply {
  expect(reply.status, reply.text).toBe(status);
  return reply;
}

/** A link of the public URL, opened on the server process; the path below /api/auth. */
const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname.replace(/^\/api\/auth/, "")}${url.search}`;
};

const run = Date.now().toString(36);
let seq = 0;
const email = (name: string) => `${name}.${run}.${++seq}@example.test`;

async function mailTo(address: string, subject: string, after = 0): Promise<ReceivedMail> {
  return sink.waitFor((m) => m.to.includes(address) && m.subject.includes(subject) && sink.messages.indexOf(m) >= after, 10_000);
}

async function signUp(name: string, extra: Record<string, unknown> = {}) {
  const address = email(name);
  const res = ok(await post("/sign-up/email", { name, email: address, password: PASSWORD, ...extra }));
  return { id: res.body.user.id as string, email: address, token: res.body.token as string };
}

describe(`no AsyncLocalStorage in the serving process (${testDialect})`, () => {
  it("the probe is loaded, and migrating at start activated nothing", async () => {
    expect(probeLines()[0]).toMatchObject({ kind: "loaded", pid: server.child.pid });
    await step("start (migrations)", async () => {
      ok(await get("/ok"));
    });
    expect(activations).toEqual([]);
  });

  it("email and password, sessions, user, two-factor, mail links, passwordless, device, passkey, OAuth, admin: zero activations", async () => {
    const a = await (async () => {
      let user!: Awaited<ReturnType<typeof signUp>>;
      await step("sign-up", async () => {
        user = await signUp("ala", { username: `ala_${run}` });
      });
      return user;
    })();
    let token = a.token;
    const bearer = () => ({ bearer: token });

    await step("sign-in email, sign-in username, is-username-available", async () => {
      ok(await post("/sign-in/email", { email: a.email, password: PASSWORD }));
      ok(await post("/sign-in/username", { username: `ala_${run}`, password: PASSWORD }));
      expect(ok(await post("/is-username-available", { username: `free_${run}` })).body).toEqual({ available: true });
    });

    await step("get-session (bearer, cookie)", async () => {
      expect(ok(await get("/get-session", bearer())).body.user.id).toBe(a.id);
      expect(ok(await get("/get-session", { cookie: `portcullis.session_token=${token}` })).body.user.id).toBe(a.id);
    });

    await step("update-user, verify-password", async () => {
      ok(await post("/update-user", { name: "Ala Renamed" }, bearer()));
      ok(await post("/verify-password", { password: PASSWORD }, bearer()));
    });

    await step("list-sessions, revoke-session, revoke-other-sessions", async () => {
      const other = ok(await post("/sign-in/email", { email: a.email, password: PASSWORD })).body.token as string;
      const listed = ok(await get("/list-sessions", bearer())).body as { token: string }[];
      expect(listed.length).toBeGreaterThanOrEqual(3);
      ok(await post("/revoke-session", { token: other }, bearer()));
      ok(await post("/revoke-other-sessions", {}, bearer()));
      expect(ok(await get("/list-sessions", bearer())).body).toHaveLength(1);
    });

    await step("change-password (revoking the other sessions)", async () => {
      const res = ok(await post("/change-password", { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeOtherSessions: true }, bearer()));
      token = res.body.token;
      ok(await post("/change-password", { currentPassword: NEW_PASSWORD, newPassword: PASSWORD }, bearer()));
    });

    let secret = "";
    let backupCodes: string[] = [];
    await step("two-factor enable, verify-totp (turns it on)", async () => {
      const enabled = ok(await post("/two-factor/enable", { password: PASSWORD }, bearer())).body;
      secret = new URL(enabled.totpURI).searchParams.get("secret")!;
      backupCodes = enabled.backupCodes;
      const on = ok(await post("/two-factor/verify-totp", { code: totpCode(secret, Date.now()) }, bearer()));
      expect(on.body.user.twoFactorEnabled).toBe(true);
    });

    let trust = "";
    await step("two-factor sign-in: pending, backup code with trust-device, trusted sign-in", async () => {
      const pending = ok(await post("/sign-in/email", { email: a.email, password: PASSWORD }));
      expect(pending.body.twoFactorRedirect).toBe(true);
      const done = ok(await post("/two-factor/verify-backup-code", { code: backupCodes[0], trustDevice: true }, { cookie: cookieFrom(pending.headers, "portcullis.two_factor")! }));
      expect(typeof done.body.token).toBe("string");
      trust = cookieFrom(done.headers, "portcullis.trust_device")!;
      const trusted = ok(await post("/sign-in/email", { email: a.email, password: PASSWORD }, { cookie: trust }));
      expect(typeof trusted.body.token).toBe("string");
    });

    await step("two-factor send-otp, verify-otp, generate-backup-codes, disable", async () => {
      const before = sink.messages.length;
      ok(await post("/two-factor/send-otp", {}, bearer()));
      const mail = await mailTo(a.email, "verification code", before);
      ok(await post("/two-factor/verify-otp", { code: /\b(\d{6})\b/.exec(mail.text)![1] }, bearer()));
      ok(await post("/two-factor/generate-backup-codes", { password: PASSWORD }, bearer()));
      ok(await post("/two-factor/disable", { password: PASSWORD }, bearer()));
    });

    await step("send-verification-email, verify-email", async () => {
      const before = sink.messages.length;
      ok(await post("/send-verification-email", { email: a.email }));
      const link = linkFrom(await mailTo(a.email, "Verify your email address", before), "/verify-email");
      ok(await get(pathOf(link)));
      expect(ok(await get("/get-session", bearer())).body.user.emailVerified).toBe(true);
    });

    await step("change-email of a verified address (confirmation, then the new address's link)", async () => {
      const newEmail = email("ala-new");
      const before = sink.messages.length;
      ok(await post("/change-email", { newEmail }, bearer()));
      const confirm = linkFrom(await mailTo(a.email, "Confirm your new email address", before), "/verify-email");
      ok(await get(pathOf(confirm)));
      const verify = linkFrom(await mailTo(newEmail, "Verify your email address", before), "/verify-email");
      ok(await get(pathOf(verify)));
      expect(ok(await get("/get-session", bearer())).body.user.email).toBe(newEmail);
      a.email = newEmail;
    });

    const b = await (async () => {
      let user!: Awaited<ReturnType<typeof signUp>>;
      await step("sign-up (second user), change-email of an unverified address", async () => {
        user = await signUp("bo");
        const moved = email("bo-moved");
        ok(await post("/change-email", { newEmail: moved }, { bearer: user.token }));
        user.email = moved;
      });
      return user;
    })();

    await step("request-password-reset, reset-password", async () => {
      const before = sink.messages.length;
      ok(await post("/request-password-reset", { email: b.email }));
      const link = linkFrom(await mailTo(b.email, "Reset your password", before), "/reset-password/");
      const resetToken = new URL(link).pathname.split("/").pop()!;
      ok(await post("/reset-password", { token: resetToken, newPassword: NEW_PASSWORD }));
      b.token = ok(await post("/sign-in/email", { email: b.email, password: NEW_PASSWORD })).body.token;
    });

    await step("magic link (confirm page, its form post), email codes (sign-in, reset-password)", async () => {
      let before = sink.messages.length;
      ok(await post("/sign-in/magic-link", { email: b.email, callbackURL: "/in" }));
      const link = linkFrom(await mailTo(b.email, "Your sign-in link", before), "/magic-link/verify");
      const token = new URL(link).searchParams.get("token")!;
      ok(await get(pathOf(link), { headers: { accept: "text/html" } }));
      const form = new URLSearchParams({ token, callbackURL: "/in" }).toString();
      ok(await call("POST", "/magic-link/verify", { raw: form, headers: { "content-type": "application/x-www-form-urlencoded" } }), 302);
      const codeIn = (mail: ReceivedMail) => /^\s*(\d{6})\s*$/m.exec(mail.text)![1]!;
      before = sink.messages.length;
      ok(await post("/email-otp/send-verification-otp", { email: b.email, type: "sign-in" }));
      ok(await post("/sign-in/email-otp", { email: b.email, otp: codeIn(await mailTo(b.email, "Your sign-in code", before)) }));
      before = sink.messages.length;
      ok(await post("/forget-password/email-otp", { email: b.email }));
      ok(await post("/email-otp/reset-password", { email: b.email, otp: codeIn(await mailTo(b.email, "Your password reset code", before)), password: NEW_PASSWORD }));
      b.token = ok(await post("/sign-in/email", { email: b.email, password: NEW_PASSWORD })).body.token;
    });

    await step("device authorization: code, claim, approve, token", async () => {
      const code = ok(await post("/device/code", { client_id: "tv-app" })).body;
      ok(await get(`/device?user_code=${encodeURIComponent(code.user_code)}`, { bearer: b.token }));
      ok(await post("/device/approve", { userCode: code.user_code }, { bearer: b.token }));
      const issued = ok(await post("/device/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: code.device_code, client_id: "tv-app" }));
      expect(typeof issued.body.access_token).toBe("string");
    });

    await step("passkey: register, sign in, rename, list, delete", async () => {
      const authenticator = new SoftAuthenticator(PUBLIC_URL);
      const regOptions = ok(await get("/passkey/generate-register-options", { bearer: b.token }));
      const registered = ok(await post("/passkey/verify-registration", { response: authenticator.register(regOptions.body), name: "laptop" }, { bearer: b.token, cookie: cookieFrom(regOptions.headers, "portcullis.passkey")! }));
      const authOptions = ok(await get("/passkey/generate-authenticate-options"));
      const signedIn = ok(await post("/passkey/verify-authentication", { response: authenticator.assert(authOptions.body) }, { cookie: cookieFrom(authOptions.headers, "portcullis.passkey")! }));
      expect(signedIn.body.user.id).toBe(b.id);
      ok(await post("/passkey/update-passkey", { id: registered.body.id, name: "work laptop" }, { bearer: b.token }));
      expect(ok(await get("/passkey/list-user-passkeys", { bearer: b.token })).body).toHaveLength(1);
      ok(await post("/passkey/delete-passkey", { id: registered.body.id }, { bearer: b.token }));
    });

    await step("OAuth: sign-in (new user), link-social, list-accounts, unlink-account", async () => {
      const social = email("gus");
      oidc.setAccount({ sub: `gus-${run}`, email: social, email_verified: true, name: "Gus" });
      const browser = new Browser();
      const start = ok(await browser.post(at("/sign-in/social"), { provider: "google", disableRedirect: true }));
      const outcome = await oidc.authorize(start.body.url, { sub: `gus-${run}` });
      if (outcome.kind !== "redirect") throw new Error("expected a redirect from the provider");
      ok(await browser.get(at(pathOf(outcome.location))), 302);
      expect(browser.value("portcullis.session_token")).toBeTruthy();

      // b links a provider account of its own, then unlinks it (its password stays a way in).
      oidc.setAccount({ sub: `bo-${run}`, email: email("bo-google"), email_verified: true, name: "Bo" });
      const linking = new Browser(`portcullis.session_token=${b.token}`);
      const linkStart = ok(await linking.post(at("/link-social"), { provider: "google", disableRedirect: true }));
      const linked = await oidc.authorize(linkStart.body.url, { sub: `bo-${run}` });
      if (linked.kind !== "redirect") throw new Error("expected a redirect from the provider");
      ok(await linking.get(at(pathOf(linked.location))), 302);
      const accounts = ok(await get("/list-accounts", { bearer: b.token })).body as { providerId: string }[];
      expect(accounts.map((x) => x.providerId).sort()).toEqual(["credential", "google"]);
      ok(await post("/unlink-account", { providerId: "google" }, { bearer: b.token }));
    });

    const adminEmail = email("root");
    let admin = "";
    await step("admin: create-admin (its own process), sign-in", async () => {
      await createAdmin(adminEmail);
      admin = ok(await post("/sign-in/email", { email: adminEmail, password: PASSWORD })).body.token;
    });
    const asAdmin = () => ({ bearer: admin });

    let created = "";
    await step("admin: create-user, get-user, update-user, set-role, set-user-password", async () => {
      created = ok(await post("/admin/create-user", { email: email("made"), password: PASSWORD, name: "Made" }, asAdmin())).body.user.id;
      ok(await get(`/admin/get-user?id=${created}`, asAdmin()));
      ok(await post("/admin/update-user", { userId: created, data: { name: "Made Renamed" } }, asAdmin()));
      ok(await post("/admin/set-role", { userId: created, role: "admin" }, asAdmin()));
      ok(await post("/admin/set-role", { userId: created, role: "user" }, asAdmin()));
      ok(await post("/admin/set-user-password", { userId: created, newPassword: NEW_PASSWORD }, asAdmin()));
      ok(await post("/admin/has-permission", { permissions: { user: ["list"] } }, asAdmin()));
    });

    await step("admin: list-users, list-audit-events", async () => {
      expect(ok(await get("/admin/list-users?limit=10", asAdmin())).body.users.length).toBeGreaterThan(0);
      expect(ok(await get("/admin/list-audit-events?limit=10", asAdmin())).body.events.length).toBeGreaterThan(0);
    });

    await step("admin: ban-user, unban-user", async () => {
      ok(await post("/admin/ban-user", { userId: b.id, banReason: "test" }, asAdmin()));
      expect((await post("/sign-in/email", { email: b.email, password: NEW_PASSWORD })).body.code).toBe("BANNED_USER");
      ok(await post("/admin/unban-user", { userId: b.id }, asAdmin()));
      b.token = ok(await post("/sign-in/email", { email: b.email, password: NEW_PASSWORD })).body.token;
    });

    await step("admin: impersonate-user, stop-impersonating", async () => {
      const imp = ok(await post("/admin/impersonate-user", { userId: b.id }, asAdmin()));
      ok(await post("/admin/stop-impersonating", {}, { bearer: imp.body.session.token }));
    });

    await step("admin: list-user-sessions, revoke-user-session, revoke-user-sessions, reset-two-factor, remove-user", async () => {
      const listed = ok(await post("/admin/list-user-sessions", { userId: b.id }, asAdmin())).body.sessions as { id: string }[];
      expect(listed.length).toBeGreaterThan(0);
      ok(await post("/admin/revoke-user-session", { sessionId: listed[0]!.id }, asAdmin()));
      ok(await post("/admin/revoke-user-sessions", { userId: b.id }, asAdmin()));
      ok(await post("/admin/reset-two-factor", { userId: a.id }, asAdmin()));
      ok(await post("/admin/remove-user", { userId: created }, asAdmin()));
    });

    await step("delete-user (password), sign-out", async () => {
      const c = await signUp("cy");
      ok(await post("/delete-user", { password: PASSWORD }, { bearer: c.token }));
      ok(await post("/sign-out", {}, bearer()));
      expect(ok(await get("/get-session", bearer())).body).toBeNull();
    });

    const report = activations.map(({ step: name, activation }) => `${name}: ${activation.kind}\n${activation.stack.split("\n").slice(1, 12).join("\n")}`);
    expect(report, `AsyncLocalStorage activated in the serving process:\n\n${report.join("\n\n")}`).toEqual([]);
  });
});
