import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieFrom, get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { atServer, callbackUri, expectError, oidcProviders } from "../../harness/oauth-helpers.ts";

/**
 * Whoever registered an address without proving it loses every way
 * in when the owner proves it (a provider with a verified email, or a password reset), in one
 * transaction; and a new password outlives no earlier reset link.
 */

const GRANT = "urn:ietf:params:oauth:grant-type:device_code";

let oidc: TestOidcProvider;
let smtp: SmtpSink;
let server: TestServer;

let n = 0;
function idpAccount(opts: { email?: string; verified?: boolean } = {}) {
  n += 1;
  const sub = `takeover-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: opts.email ?? `${sub}@example.test`, email_verified: opts.verified ?? true, name: `Idp ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [callbackUri("oidc")] });
  smtp = await startSmtpSink();
  server = await startTestServer({ providers: { oidc: oidcProviders(oidc).oidc }, email: { smtpUrl: smtp.url } });
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
  await oidc?.close();
});

// --- the browser at the provider, carrying every cookie the start of the flow set ---

const pairs = (res: Reply) => res.headers.getSetCookie().map((c) => c.split(";")[0]!);

/** POST /sign-in/social (or /link-social with `cookie`): the authorization URL and the browser's cookies. */
async function startFlow(cookie?: string) {
  const start = cookie
    ? await post(`${server.auth}/link-social`, { provider: "oidc", disableRedirect: true }, { cookie })
    : await post(`${server.auth}/sign-in/social`, { provider: "oidc", disableRedirect: true });
  expect(start.status, start.text).toBe(200);
  return { url: start.body.url as string, cookie: [cookie, ...pairs(start)].filter(Boolean).join("; ") };
}

/** The provider logs `sub` in and redirects back; the same browser arrives at the callback. */
async function finishFlow(flow: { url: string; cookie: string }, sub: string): Promise<Reply> {
  const outcome = await oidc.authorize(flow.url, { sub });
  if (outcome.kind !== "redirect") throw new Error("expected a redirect back from the provider");
  return get(atServer(server, outcome.location), flow.cookie ? { cookie: flow.cookie } : {});
}

async function socialSignIn(sub: string): Promise<{ callback: Reply; cookie: string | null }> {
  const callback = await finishFlow(await startFlow(), sub);
  return { callback, cookie: cookieFrom(callback.headers) };
}

// --- a device (RFC 8628), form-encoded ---

const form = (path: string, params: Record<string, string>) =>
  request("POST", `${server.auth}${path}`, {
    raw: new URLSearchParams(params).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

async function deviceCode() {
  const res = await form("/device/code", { client_id: "tv" });
  expect(res.status, res.text).toBe(200);
  return res.body as { device_code: string; user_code: string };
}

const poll = (deviceCodeValue: string) => form("/device/token", { grant_type: GRANT, device_code: deviceCodeValue, client_id: "tv" });

/** A code claimed (GET /device while signed in) and, when asked, approved by `who`. */
async function deviceClaimedBy(who: SignedInUser, approve: boolean) {
  const code = await deviceCode();
  const claim = await get(`${server.auth}/device?user_code=${code.user_code}`, { cookie: who.cookie });
  expect(claim.status, claim.text).toBe(200);
  if (approve) {
    const res = await post(`${server.auth}/device/approve`, { userCode: code.user_code }, { cookie: who.cookie });
    expect(res.status, res.text).toBe(200);
  }
  return code;
}

function expectGrantRevoked(res: Reply) {
  // The code is gone with everything else the squatter held: RFC 6749 §5.2 invalid_grant (revoked).
  expect(res.status, res.text).toBe(400);
  expect(res.body.error).toBe("invalid_grant");
  expect(res.body.access_token).toBeUndefined();
}

// --- mailed links ---

async function mailedLink(email: string, ask: () => Promise<Reply>, path: string): Promise<string> {
  const before = smtp.to(email).length;
  const res = await ask();
  expect(res.status, res.text).toBe(200);
  await smtp.waitFor(() => smtp.to(email).length > before);
  return onServer(linkFrom(smtp.to(email)[before]!, path), server.url);
}

const resetLink = (email: string) => mailedLink(email, () => post(`${server.auth}/request-password-reset`, { email }), "/reset-password/");
const verificationLink = (email: string) => mailedLink(email, () => post(`${server.auth}/send-verification-email`, { email }), "/verify-email");
const tokenOf = (resetUrl: string) => new URL(resetUrl).pathname.split("/").pop()!;
const resetWith = (link: string, newPassword: string) => post(`${server.auth}/reset-password`, { token: tokenOf(link), newPassword });

const sessionOf = async (credential: { cookie?: string; bearer?: string }) => (await get(`${server.auth}/get-session`, credential)).body;

async function providersOf(cookie: string): Promise<string[][]> {
  const res = await get(`${server.auth}/list-accounts`, { cookie });
  expect(res.status, res.text).toBe(200);
  return (res.body as { providerId: string; accountId: string }[]).map((a) => [a.providerId, a.accountId]).sort();
}

async function rowsHeldBy(userId: string) {
  const conn = server.portcullis.app.orm.em.fork().getConnection();
  const devices = await conn.execute("select id from device_codes where user_id = ?", [userId]);
  const links = await conn.execute("select purpose from verifications where value like ?", [`%${userId}%`]);
  return { devices: devices.length, links: links.length };
}

/**
 * Everything a squatter can hold on an address they never proved: two sessions (one minted by
 * a device), an approved and a claimed pending device code, a provider account of their own
 * linked, a /link-social flow in flight, and a reset and a verification link.
 */
async function squat() {
  const squatter = await signUp(server, { email: uniqueEmail("victim") });
  const second = await signIn(server, squatter.email);
  const ownIdp = idpAccount();
  expect((await finishFlow(await startFlow(squatter.cookie), ownIdp.sub)).status).toBe(302);
  const minted = await deviceClaimedBy(squatter, true);
  const deviceSession = await poll(minted.device_code);
  expect(deviceSession.status, deviceSession.text).toBe(200);
  const approved = await deviceClaimedBy(squatter, true);
  const pending = await deviceClaimedBy(squatter, false);
  const linkInFlight = await startFlow(squatter.cookie);
  const latecomer = idpAccount();
  const reset = await resetLink(squatter.email);
  const verify = await verificationLink(squatter.email);
  return {
    squatter,
    tokens: [squatter.token, second.token, deviceSession.body.access_token as string],
    ownIdp,
    devices: { approved, pending },
    linkInFlight,
    latecomer,
    links: { reset, verify },
  };
}

/** Asserts the squatter holds nothing any more; `owner` is a cookie of the rightful owner. */
async function expectSquatterHoldsNothing(s: Awaited<ReturnType<typeof squat>>, owner: string) {
  for (const token of s.tokens) expect(await sessionOf({ bearer: token })).toBeNull();
  expectGrantRevoked(await poll(s.devices.approved.device_code));
  expectGrantRevoked(await poll(s.devices.pending.device_code));
  const approveGone = await post(`${server.auth}/device/approve`, { userCode: s.devices.pending.user_code }, { cookie: owner });
  expect(approveGone.status, approveGone.text).toBe(400);
  expect(approveGone.body).toEqual({ error: "invalid_request", error_description: "Invalid user code" });
  expectError(await get(s.links.verify), 400, "INVALID_TOKEN");
  // The link flow started as the squatter no longer links anything to this user.
  expectError(await finishFlow(s.linkInFlight, s.latecomer.sub), 400, "STATE_MISMATCH");
  // Their own provider account now signs in as a user of its own, not as the owner.
  const theirs = await socialSignIn(s.ownIdp.sub);
  expect(theirs.callback.status, theirs.callback.text).toBe(302);
  expect((await sessionOf({ cookie: theirs.cookie! })).user.id).not.toBe(s.squatter.id);
  expect(await rowsHeldBy(s.squatter.id)).toEqual({ devices: 0, links: 0 });
}

describe("pre-account-takeover through every door", () => {
  it("a verified provider sign-in of the owner removes the squatter's sessions, device codes, links and accounts", async () => {
    const s = await squat();

    const owner = idpAccount({ email: s.squatter.email, verified: true });
    const { callback, cookie } = await socialSignIn(owner.sub);
    expect(callback.status, callback.text).toBe(302);
    expect((await sessionOf({ cookie: cookie! })).user).toMatchObject({ id: s.squatter.id, emailVerified: true });

    await expectSquatterHoldsNothing(s, cookie!);
    expectError(await resetWith(s.links.reset, "squatter-wants-back-in"), 400, "INVALID_TOKEN");
    expectError(await post(`${server.auth}/sign-in/email`, { email: s.squatter.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
    expect(await providersOf(cookie!)).toEqual([["oidc", owner.sub]]);
    // The owner's own session is the one that survives.
    expect((await sessionOf({ cookie: cookie! })).user.id).toBe(s.squatter.id);
  });
});

describe("password reset of an unverified account", () => {
  it("proves the address: the email becomes verified and the squatter's other ways in are gone", async () => {
    const s = await squat();
    const ownersLink = await resetLink(s.squatter.email);

    const done = await resetWith(ownersLink, "owner-new-password");
    expect(done.status, done.text).toBe(200);
    const owner = await signIn(server, s.squatter.email, "owner-new-password");
    expect(owner.user).toMatchObject({ id: s.squatter.id, emailVerified: true });

    await expectSquatterHoldsNothing(s, owner.cookie);
    expectError(await resetWith(s.links.reset, "squatter-wants-back-in"), 400, "INVALID_TOKEN");
    // Only the password just set remains: the provider account linked while unproven is gone.
    expect(await providersOf(owner.cookie)).toEqual([["credential", s.squatter.id]]);
  });

  it("a verified account keeps its linked provider accounts, but loses its device codes with its sessions", async () => {
    const user = await signUp(server);
    expect((await get(await verificationLink(user.email))).status).toBe(200);
    const idp = idpAccount();
    expect((await finishFlow(await startFlow(user.cookie), idp.sub)).status).toBe(302);
    const approved = await deviceClaimedBy(user, true);

    expect((await resetWith(await resetLink(user.email), "verified-new-password")).status).toBe(200);
    const back = await signIn(server, user.email, "verified-new-password");
    expect(await providersOf(back.cookie)).toEqual([["credential", user.id], ["oidc", idp.sub]].sort());
    // An approved device code is a session not yet collected: a reset revokes it like the others.
    expectGrantRevoked(await poll(approved.device_code));
    expect(await sessionOf({ bearer: user.token })).toBeNull();
  });
});

describe("a new password outlives every earlier reset link", () => {
  it("reset: of two links, using one kills the other", async () => {
    const user = await signUp(server);
    const first = await resetLink(user.email);
    const second = await resetLink(user.email);
    expect((await resetWith(second, "second-link-password")).status).toBe(200);
    expectError(await resetWith(first, "first-link-password"), 400, "INVALID_TOKEN");
    const landing = await get(`${first}?callbackURL=/reset`);
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toMatch(/\?error=INVALID_TOKEN$/);
    await signIn(server, user.email, "second-link-password");
  });

  it("change-password (REST and tRPC) kills every outstanding reset link", async () => {
    const user = await signUp(server);
    const link = await resetLink(user.email);
    const changed = await post(`${server.auth}/change-password`, { currentPassword: PASSWORD, newPassword: "changed-password-1" }, { bearer: user.token });
    expect(changed.status, changed.text).toBe(200);
    expectError(await resetWith(link, "attacker-password"), 400, "INVALID_TOKEN");

    const viaTrpc = await resetLink(user.email);
    const trpc = await post(`${server.url}/api/trpc/changePassword`, { currentPassword: "changed-password-1", newPassword: "changed-password-2" }, { bearer: user.token });
    expect(trpc.status, trpc.text).toBe(200);
    expectError(await resetWith(viaTrpc, "attacker-password"), 400, "INVALID_TOKEN");
    await signIn(server, user.email, "changed-password-2");
  });
});
