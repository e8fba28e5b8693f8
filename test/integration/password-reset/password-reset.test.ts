import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { Account, Verification } from "../../../src/db/entities/index.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { captureLogger, linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

const PASSWORD = "password123";
const PUBLIC = "http://127.0.0.1:3000";
const MESSAGE = "If this email exists in our system, check your email for the reset link";

let sink: SmtpSink;
let server: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url } });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

async function signUp(s: TestServer, email: string): Promise<Reply> {
  const up = await post(`${s.auth}/sign-up/email`, { name: "Pat", email, password: PASSWORD });
  expect(up.status).toBe(200);
  return up;
}

const signIn = (s: TestServer, email: string, password: string) => post(`${s.auth}/sign-in/email`, { email, password });

/** Requests a reset and returns the mailed link and its token. */
async function requestReset(s: TestServer, mails: SmtpSink, email: string, redirectTo?: string) {
  const before = mails.to(email).length;
  const reply = await post(`${s.auth}/request-password-reset`, { email, ...(redirectTo ? { redirectTo } : {}) });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({ status: true, message: MESSAGE });
  await mails.waitFor(() => mails.to(email).length > before);
  const mail = mails.to(email)[before]!;
  expect(mail.subject).toBe("Reset your password");
  const link = linkFrom(mail, "/reset-password/");
  return { link, token: new URL(link).pathname.split("/").pop()! };
}

const reset = (s: TestServer, token: string, newPassword: string) =>
  post(`${s.auth}/reset-password`, { token, newPassword });

describe("password reset", () => {
  it("reset link -> app form -> new password works, the old one fails, every session is gone", async () => {
    const email = uniqueEmail("reset");
    const first = (await signUp(server, email)).body.token as string;
    const second = (await signIn(server, email, PASSWORD)).body.token as string;

    const { link, token } = await requestReset(server, sink, email, "/reset?from=mail");
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC}/api/auth/reset-password/${token}`);
    expect(url.searchParams.get("callbackURL")).toBe("/reset?from=mail");
    expect(Buffer.from(token, "base64url").length).toBeGreaterThanOrEqual(32);

    // Stored as SHA-256 only.
    const rows = await server.portcullis.app.orm.em.fork().find(Verification, { purpose: "password-reset" });
    expect(rows.map((r) => r.identifier)).toContain(sha256(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    // The link lands on the app's form with the token, and does not use it up.
    for (let i = 0; i < 2; i++) {
      const landing = await get(onServer(link, server.url));
      expect(landing.status).toBe(302);
      expect(landing.headers.get("location")).toBe(`${PUBLIC}/reset?from=mail&token=${token}`);
    }

    const done = await reset(server, token, "new-password-456");
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ status: true });

    for (const old of [first, second]) {
      expect((await get(`${server.auth}/get-session`, { bearer: old })).body).toBeNull();
    }
    const oldPassword = await signIn(server, email, PASSWORD);
    expect(oldPassword.status).toBe(401);
    expect(oldPassword.body.code).toBe("INVALID_EMAIL_OR_PASSWORD");
    expect((await signIn(server, email, "new-password-456")).status).toBe(200);

    // Single use.
    const reused = await reset(server, token, "third-password-789");
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe("INVALID_TOKEN");
    const landing = await get(onServer(link, server.url));
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toBe(`${PUBLIC}/reset?from=mail&error=INVALID_TOKEN`);
    expect((await signIn(server, email, "new-password-456")).status).toBe(200);
  });

  it("known and unknown addresses get the same answer in the same time; only the known one gets mail", async () => {
    const known = uniqueEmail("known");
    await signUp(server, known);
    const ask = async (email: string) => {
      const started = performance.now();
      const reply = await post(`${server.auth}/request-password-reset`, { email });
      return { reply, ms: performance.now() - started };
    };
    // Warm both paths up, then make the relay slow: a reset that waited for its lookup and its
    // SMTP round trip would now take at least SLOW ms for a known address, and almost none for an unknown.
    await ask(known);
    await ask(uniqueEmail("warm"));
    await server.portcullis.app.mailer.settle();
    const SLOW = 400;
    sink.delayEach(SLOW);
    const timings: Record<"known" | "unknown", number[]> = { known: [], unknown: [] };
    const bodies = new Set<string>();
    const unknowns: string[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const order = i % 2 === 0 ? (["known", "unknown"] as const) : (["unknown", "known"] as const);
        for (const kind of order) {
          const email = kind === "known" ? known : uniqueEmail("unknown");
          if (kind === "unknown") unknowns.push(email);
          const { reply, ms } = await ask(email);
          expect(reply.status).toBe(200);
          bodies.add(reply.text);
          timings[kind].push(ms);
          await server.portcullis.app.mailer.settle(); // keep one request's SMTP work out of the next one's time
        }
      }
    } finally {
      sink.delayEach(0);
    }
    expect([...bodies]).toEqual([JSON.stringify({ status: true, message: MESSAGE })]);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(timings.known), JSON.stringify(timings)).toBeLessThan(SLOW / 2);
    expect(Math.abs(median(timings.known) - median(timings.unknown)), JSON.stringify(timings)).toBeLessThan(50);
    expect(sink.to(known)).toHaveLength(7);
    for (const email of unknowns) expect(sink.to(email)).toHaveLength(0);
  });

  it("links expire after one hour (injected clock) and the password stays", async () => {
    const email = uniqueEmail("expire");
    await signUp(server, email);
    const early = await requestReset(server, sink, email);
    expect(new URL(early.link).search).toBe(""); // no redirectTo, no callbackURL
    server.clock.advance(59 * MINUTE);
    const late = await requestReset(server, sink, email, "/reset");
    server.clock.advance(2 * MINUTE);

    const expired = await reset(server, early.token, "expired-password-1");
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe("INVALID_TOKEN");
    const check = await get(onServer(early.link, server.url));
    expect(check.status).toBe(400);
    expect(check.body.code).toBe("INVALID_TOKEN");
    expect((await signIn(server, email, PASSWORD)).status).toBe(200);

    // The one issued 59 minutes later is still good.
    expect((await get(onServer(late.link, server.url))).headers.get("location")).toBe(`${PUBLIC}/reset?token=${late.token}`);
    expect((await reset(server, late.token, "fresh-password-2")).status).toBe(200);
  });

  it("the lifetime is configurable", async () => {
    const short = await startTestServer({
      email: { smtpUrl: sink.url },
      emailAndPassword: { resetPasswordTokenExpiresInSec: 120 },
    });
    try {
      const email = uniqueEmail("short");
      await signUp(short, email);
      const { token } = await requestReset(short, sink, email);
      short.clock.advance(121 * SECOND);
      expect((await reset(short, token, "never-applied-1")).body.code).toBe("INVALID_TOKEN");
    } finally {
      await short.close();
    }
  });

  it("password length is checked before the token is used up", async () => {
    const email = uniqueEmail("length");
    await signUp(server, email);
    const { token } = await requestReset(server, sink, email);
    const tooShort = await reset(server, token, "short");
    expect(tooShort.status).toBe(400);
    expect(tooShort.body.code).toBe("PASSWORD_TOO_SHORT");
    const tooLong = await reset(server, token, "x".repeat(129));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe("PASSWORD_TOO_LONG");
    expect((await reset(server, token, "long-enough-1")).status).toBe(200);
    expect((await signIn(server, email, "long-enough-1")).status).toBe(200);
  });

  it("racing uses of one token: exactly one wins, and only its password works", async () => {
    const email = uniqueEmail("race");
    await signUp(server, email);
    const { token } = await requestReset(server, sink, email);
    const passwords = ["race-password-a", "race-password-b", "race-password-c", "race-password-d"];
    const replies = await Promise.all(passwords.map((p) => reset(server, token, p)));
    const winners = replies.flatMap((r, i) => (r.status === 200 ? [passwords[i]!] : []));
    expect(winners).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("INVALID_TOKEN");
    }
    for (const p of passwords) {
      expect((await signIn(server, email, p)).status).toBe(p === winners[0] ? 200 : 401);
    }
  });

  it("a user without a password account gets one", async () => {
    const email = uniqueEmail("social");
    const userId = (await signUp(server, email)).body.user.id as string;
    // As a user who only ever signed in with a provider would be.
    await server.portcullis.app.orm.em.fork().nativeDelete(Account, { user: userId });
    expect((await signIn(server, email, PASSWORD)).status).toBe(401);
    const { token } = await requestReset(server, sink, email);
    expect((await reset(server, token, "first-password-1")).status).toBe(200);
    expect((await signIn(server, email, "first-password-1")).status).toBe(200);
  });

  it("rejects untrusted redirects, malformed emails and unknown tokens", async () => {
    const evil = await post(`${server.auth}/request-password-reset`, { email: uniqueEmail(), redirectTo: "https://evil.example/r" });
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe("INVALID_CALLBACK_URL");
    const sneaky = await get(`${server.auth}/reset-password/${"a".repeat(43)}?callbackURL=${encodeURIComponent("//evil.example")}`);
    expect(sneaky.status).toBe(403);
    expect(sneaky.body.code).toBe("INVALID_CALLBACK_URL");
    const malformed = await post(`${server.auth}/request-password-reset`, { email: "nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("INVALID_EMAIL");
    const unknown = await reset(server, "a".repeat(43), "whatever-password");
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("INVALID_TOKEN");
    const missing = await post(`${server.auth}/reset-password`, { newPassword: "whatever-password" });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe("VALIDATION_ERROR");
  });

  it("a refused send is logged with the request id and leaves no token behind", async () => {
    const { logger, lines } = captureLogger();
    const failing = await startSmtpSink();
    const s = await startTestServer({ email: { smtpUrl: failing.url } }, { logger });
    try {
      const email = uniqueEmail("bounce");
      await signUp(s, email);
      failing.rejectAll(true);
      const reply = await post(`${s.auth}/request-password-reset`, { email });
      expect(reply.body).toEqual({ status: true, message: MESSAGE });
      await s.portcullis.app.mailer.settle();
      const request = lines.find((l) => l.msg === "request" && l.route === "/request-password-reset");
      const failure = lines.find((l) => l.msg === "email not sent");
      expect(failure).toBeDefined();
      expect(failure!.requestId).toBe(request!.requestId);
      expect(failure!.mail).toBe("password-reset");
      expect(await s.portcullis.app.orm.em.fork().count(Verification, {})).toBe(0);

      failing.rejectAll(false);
      const { token } = await requestReset(s, failing, email);
      expect((await reset(s, token, "after-bounce-1")).status).toBe(200);
    } finally {
      await s.close();
      await failing.close();
    }
  });
});
