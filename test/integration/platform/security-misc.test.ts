import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { createPortcullis, type Portcullis } from "../../../src/index.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { browserFlow, callbackUri, oidcProviders, tokenOf } from "../../harness/oauth-helpers.ts";

/** Prototype keys in permission checks, unsafe user images. */

let server: TestServer;
let admin: SignedInUser;
let plain: SignedInUser;
let trpc: string;
let oidc: TestOidcProvider;

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google"].map(callbackUri) });
  server = await startTestServer({ admin: { roles: { support: { user: ["list"] } } }, providers: oidcProviders(oidc) });
  trpc = `${server.url}/api/trpc`;
  admin = await bootstrapAdmin(server);
  plain = await signUp(server);
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

const PROTOTYPE_KEYS = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__"];

describe("has-permission with prototype keys", () => {
  it("REST: a prototype key as resource or action answers 200 {success:false}, never 500", async () => {
    for (const key of PROTOTYPE_KEYS) {
      for (const who of [admin, plain]) {
        for (const permissions of [{ [key]: ["list"] }, { user: [key] }, { [key]: [key] }, { user: ["list"], [key]: ["list"] }]) {
          // JSON text, so `__proto__` arrives as an own key exactly as a client would send it.
          const raw = JSON.stringify({ permissions });
          const res = await post(`${server.auth}/admin/has-permission`, undefined, {
            bearer: who.token,
            raw,
            headers: { "content-type": "application/json" },
          });
          expect(res.status, `${key} ${raw}: ${res.text}`).toBe(200);
          expect(res.body, raw).toEqual({ success: false, error: null });
        }
      }
    }
  });

  it("REST: `__proto__` sent as raw JSON text is an ordinary (unknown) resource", async () => {
    for (const raw of ['{"permissions":{"__proto__":["list"]}}', '{"permissions":{"user":["list"],"__proto__":["list"]}}', '{"permission":{"__proto__":[]}}']) {
      const res = await post(`${server.auth}/admin/has-permission`, undefined, { bearer: admin.token, raw, headers: { "content-type": "application/json" } });
      expect(res.status, `${raw}: ${res.text}`).toBe(200);
      // Not silently dropped (z.record would ask about `user` alone and answer true).
      expect(res.body, raw).toEqual({ success: false, error: null });
    }
    const bad = '{"permissions":{"user":["list"],"__proto__":{"user":["list"]}}}';
    expectError(await post(`${server.auth}/admin/has-permission`, undefined, { bearer: admin.token, raw: bad, headers: { "content-type": "application/json" } }), 400, "VALIDATION_ERROR");
  });

  it("tRPC: the same questions answer {success:false}", async () => {
    for (const key of PROTOTYPE_KEYS) {
      const raw = `{"permissions":{"${key}":["${key}"]}}`;
      const res = await post(`${trpc}/admin.hasPermission`, undefined, { bearer: admin.token, raw, headers: { "content-type": "application/json" } });
      expect(res.status, `${raw}: ${res.text}`).toBe(200);
      expect(res.body.result.data, raw).toEqual({ success: false, error: null });
    }
  });

  it("a user whose role column names a prototype key holds no permission (and no 500)", async () => {
    for (const role of ["constructor", "toString", "__proto__"]) {
      const u = await signUp(server);
      await server.portcullis.app.orm.em.fork().getConnection().execute(`update users set role = ? where id = ?`, [role, u.id]);
      const ask = await adminPost(server, "has-permission", { permissions: { user: ["list"] } }, u.token);
      expect(ask.status, ask.text).toBe(200);
      expect(ask.body).toEqual({ success: false, error: null });
      expectError(await adminPost(server, "list-user-sessions", { userId: u.id }, u.token), 403, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS");
    }
  });

  it("well-formed questions still answer as before", async () => {
    expect((await adminPost(server, "has-permission", { permissions: { user: ["list"] } }, admin.token)).body).toEqual({ success: true, error: null });
    expect((await adminPost(server, "has-permission", { permissions: { billing: ["read"] } }, admin.token)).body).toEqual({ success: false, error: null });
  });
});

/** Script-bearing, relative or otherwise unusable image values. */
const UNSAFE_IMAGES = [
  "javascript:alert(1)",
  "JavaScript:alert(document.cookie)",
  " javascript:alert(1)",
  "java\tscript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
  "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+",
  "data:image/png;base64,iVBORw0KGgo=",
  "vbscript:msgbox(1)",
  "file:///etc/passwd",
  "ftp://files.example.test/a.png",
  "//evil.example/a.png",
  "/relative/a.png",
  "a.png",
  "https://",
  "https://user:pass@cdn.example.test/a.png",
  "https://cdn.example.test/a b.png",
  `https://cdn.example.test/${"a".repeat(2100)}.png`,
  "",
];

function expectImageRefused(res: { status: number; text: string; body: any }, label: string) {
  expect(res.status, `${label}: ${res.text}`).toBe(400);
  expect(res.body.code, label).toBe("VALIDATION_ERROR");
  expect(res.body.message, label).toMatch(/image/);
}

describe("user image must be an absolute http(s) URL", () => {
  it("sign-up refuses each unsafe image with 400 VALIDATION_ERROR naming image (REST and tRPC); nothing is created", async () => {
    for (const image of UNSAFE_IMAGES) {
      const email = uniqueEmail("img");
      expectImageRefused(await post(`${server.auth}/sign-up/email`, { name: "Img", email, password: PASSWORD, image }), image);
      const viaTrpc = await post(`${trpc}/signUp.email`, { name: "Img", email, password: PASSWORD, image });
      expect(viaTrpc.status, viaTrpc.text).toBe(400);
      expect(viaTrpc.body.error.data.authCode).toBe("VALIDATION_ERROR");
      // The address is still free: nothing was stored.
      expect((await post(`${server.auth}/sign-up/email`, { name: "Img", email, password: PASSWORD })).status).toBe(200);
    }
  });

  it("update-user refuses them (REST and tRPC) and keeps the old image; http(s) URLs and null still work", async () => {
    const u = await signUp(server);
    expect((await post(`${server.auth}/update-user`, { image: "https://cdn.example.test/me.png" }, { bearer: u.token })).status).toBe(200);
    for (const image of UNSAFE_IMAGES) {
      expectImageRefused(await post(`${server.auth}/update-user`, { image }, { bearer: u.token }), image);
      const viaTrpc = await post(`${trpc}/updateUser`, { image }, { bearer: u.token });
      expect(viaTrpc.status, viaTrpc.text).toBe(400);
      expect(viaTrpc.body.error.data.authCode).toBe("VALIDATION_ERROR");
    }
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.image).toBe("https://cdn.example.test/me.png");
    expect((await post(`${server.auth}/update-user`, { image: "HTTP://CDN.example.test/x.webp?size=64#a" }, { bearer: u.token })).status).toBe(200);
    expect((await post(`${server.auth}/update-user`, { image: null }, { bearer: u.token })).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.image).toBeNull();
  });

  it("admin create-user and update-user refuse them too", async () => {
    const target = await signUp(server);
    for (const image of UNSAFE_IMAGES) {
      expectImageRefused(await adminPost(server, "create-user", { email: uniqueEmail("adm-img"), name: "A", data: { image } }, admin.token), image);
      expectImageRefused(await adminPost(server, "update-user", { userId: target.id, data: { image } }, admin.token), image);
    }
    const made = await adminPost(server, "create-user", { email: uniqueEmail("adm-img"), name: "A", data: { image: "https://cdn.example.test/a.png" } }, admin.token);
    expect(made.status, made.text).toBe(200);
    expect(made.body.user.image).toBe("https://cdn.example.test/a.png");
    const updated = await adminPost(server, "update-user", { userId: target.id, data: { image: "https://cdn.example.test/b.png" } }, admin.token);
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.image).toBe("https://cdn.example.test/b.png");
  });

  it("an unsafe picture from the provider is dropped to null; the sign-in itself succeeds (generic and google)", async () => {
    for (const provider of ["oidc", "google"]) {
      for (const picture of ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "/relative.png"]) {
        const sub = `img-${provider}-${Math.random().toString(36).slice(2)}`;
        oidc.setAccount({ sub, email: `${sub}@example.test`, email_verified: true, name: "Pic", picture });
        const { cookie, callback } = await browserFlow(server, oidc, provider, sub);
        expect(cookie, `${provider} ${picture}: ${callback.status} ${callback.text}`).not.toBeNull();
        const session = await get(`${server.auth}/get-session`, { bearer: tokenOf(cookie!) });
        expect(session.body.user.image, picture).toBeNull();
      }
      const sub = `img-${provider}-ok-${Math.random().toString(36).slice(2)}`;
      oidc.setAccount({ sub, email: `${sub}@example.test`, email_verified: true, name: "Pic", picture: "https://img.example.test/p.png" });
      const { cookie } = await browserFlow(server, oidc, provider, sub);
      expect((await get(`${server.auth}/get-session`, { bearer: tokenOf(cookie!) })).body.user.image).toBe("https://img.example.test/p.png");
    }
  });
});

describe("per-address mail limit", () => {
  let sink: SmtpSink;
  let limited: TestServer;
  const extra: Portcullis[] = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
    limited = await startTestServer({ email: { smtpUrl: sink.url }, rateLimit: { enabled: true }, trustProxy: true });
  });
  afterAll(async () => {
    for (const p of extra.splice(0)) await p.close();
    await limited?.close();
    await sink?.close();
  });

  let ip = 0;
  /** Every request from another client IP: the per-IP rule never fires, only the per-address one can. */
  const fromNewIp = () => ({ headers: { "x-forwarded-for": `198.51.100.${++ip}` } });

  /** Gives deferred sends time to arrive, then counts what reached `address`. */
  async function mailsTo(address: string, atLeast: number) {
    if (atLeast > 0) await sink.waitFor(() => sink.to(address).length >= atLeast);
    await new Promise((resolve) => setTimeout(resolve, 700));
    return sink.to(address).length;
  }

  it("password reset: the 4th request within 15 min from a 4th IP sends nothing and answers exactly like the others", async () => {
    const user = await signUp(limited);
    const unknown = uniqueEmail("nobody");
    const spellings = [user.email, user.email.toUpperCase(), ` ${user.email} `, user.email];
    const known = [];
    const none = [];
    for (const [i, email] of spellings.entries()) {
      const via = i === 1 ? `${limited.url}/api/trpc/requestPasswordReset` : `${limited.auth}/request-password-reset`;
      const res = await post(via, { email }, fromNewIp());
      known.push({ status: res.status, body: i === 1 ? res.body.result.data : res.body });
      const other = await post(`${limited.auth}/request-password-reset`, { email: unknown }, fromNewIp());
      none.push({ status: other.status, body: other.body });
    }
    expect(known[0]).toEqual({ status: 200, body: { status: true, message: expect.any(String) } });
    for (const reply of [...known, ...none]) expect(reply).toEqual(known[0]);
    expect(await mailsTo(user.email, 3)).toBe(3);
  });

  it("verification mail: the same limit per address; the other purpose keeps its own budget", async () => {
    const user = await signUp(limited);
    const replies = [];
    for (let i = 0; i < 4; i++) {
      // Past the one-per-minute resend rule of each user, still inside the 15 min window.
      limited.clock.advance(61_000);
      const res = await post(`${limited.auth}/send-verification-email`, { email: user.email }, fromNewIp());
      replies.push({ status: res.status, body: res.body });
      await mailsTo(user.email, Math.min(i + 1, 3));
    }
    for (const reply of replies) expect(reply).toEqual({ status: 200, body: { status: true } });
    expect(await mailsTo(user.email, 3)).toBe(3);
    // Another purpose keeps its own budget: a reset mail still goes out.
    expect((await post(`${limited.auth}/request-password-reset`, { email: user.email }, fromNewIp())).status).toBe(200);
    expect((await sink.waitFor((m) => m.to.includes(user.email.toLowerCase()) && /reset/i.test(m.subject))).subject).toMatch(/reset/i);
  });

  it("with storage database, instances on one database share the count", async () => {
    const shared = await startTestServer({ email: { smtpUrl: sink.url }, rateLimit: { enabled: true, storage: "database" }, trustProxy: true });
    try {
      const second = await createPortcullis({
        databaseUrl: shared.db.url,
        secret: "test-secret-test-secret-test-secret-0123",
        logLevel: "silent",
        email: { smtpUrl: sink.url },
        rateLimit: { enabled: true, storage: "database" },
        trustProxy: true,
      });
      extra.push(second);
      const secondAuth = `${await second.listen(0, "127.0.0.1")}/api/auth`;
      const user = await signUp(shared);
      for (const auth of [shared.auth, secondAuth, shared.auth, secondAuth, secondAuth]) {
        expect((await post(`${auth}/request-password-reset`, { email: user.email }, fromNewIp())).status).toBe(200);
      }
      expect(await mailsTo(user.email, 3)).toBe(3);
    } finally {
      await shared.close();
    }
  });

  it("off with rateLimit.enabled false or perAddress false", async () => {
    for (const rateLimit of [{ enabled: false }, { enabled: true, perAddress: false as const }]) {
      const open = await startTestServer({ email: { smtpUrl: sink.url }, rateLimit, trustProxy: true });
      try {
        const user = await signUp(open);
        for (let i = 0; i < 4; i++) expect((await post(`${open.auth}/request-password-reset`, { email: user.email }, fromNewIp())).status).toBe(200);
        expect(await mailsTo(user.email, 4)).toBe(4);
      } finally {
        await open.close();
      }
    }
  });
});
