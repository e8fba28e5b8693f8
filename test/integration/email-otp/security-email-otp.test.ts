import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, request, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

/**
 * docs/security.md "One-time codes": what bounds the guesses at an address's code. A new send
 * gives a fresh budget of tries, so the sends an attacker can ask for must be bounded per address,
 * whatever the client IP (rateLimit.perAddress): three codes per 15 minutes, three tries each.
 */
let sink: SmtpSink;
let server: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, rateLimit: { enabled: true }, trustProxy: true });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

let ip = 0;
/** Every request from another client IP: only the per-address rule can hold it. */
const fromNewIp = () => ({ headers: { "x-forwarded-for": `203.0.113.${++ip}` } });
const codeOf = (text: string) => /^\s*(\d{6})\s*$/m.exec(text)![1]!;

describe("one-time codes: the guesses per address are bounded", () => {
  it("resending cannot buy tries beyond the per-address budget: the 4th send within 15 min from a 4th IP sends nothing and revives nothing", async () => {
    const email = uniqueEmail("otp-budget");
    let judged = 0;
    for (let send = 1; send <= 4; send++) {
      const res = await post(`${server.auth}/email-otp/send-verification-otp`, { email, type: "sign-in" }, fromNewIp());
      expect(res.body).toEqual({ success: true });
      await server.portcullis.app.mailer.settle();
      expect(sink.to(email)).toHaveLength(Math.min(send, 3));
      const code = codeOf(sink.to(email).at(-1)!.text);
      for (let i = 1; i <= 4; i++) {
        const guess = String((Number(code) + i) % 1_000_000).padStart(6, "0");
        const answer = await post(`${server.auth}/sign-in/email-otp`, { email, otp: guess }, fromNewIp());
        if (answer.body.code === "INVALID_OTP") judged++;
        else expect(answer.body.code).toBe("TOO_MANY_ATTEMPTS");
      }
    }
    expect(judged).toBe(9);
  });

  it("magic links share the rule: the 4th request for one address within 15 min sends nothing", async () => {
    const email = uniqueEmail("ml-budget");
    for (let i = 0; i < 4; i++) expect((await post(`${server.auth}/sign-in/magic-link`, { email }, fromNewIp())).body).toEqual({ status: true });
    await server.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(3);
  });

  it("per client IP: 3 code sign-in tries per 60 s (better-auth's email-otp rule), then 429 with Retry-After", async () => {
    const one = fromNewIp();
    const email = uniqueEmail("otp-ip");
    for (let i = 0; i < 3; i++) expect((await post(`${server.auth}/sign-in/email-otp`, { email, otp: "123456" }, one)).status).toBe(400);
    const limited = await post(`${server.auth}/sign-in/email-otp`, { email, otp: "123456" }, one);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(10);
  });

  it("per client IP, the plugins' built-in rules on the send and verify routes: 5 per 60 s for magic links, 3 per 60 s for codes, then 429", async () => {
    const cases: Array<[string, string, number, (n: number) => unknown]> = [
      ["POST", "/sign-in/magic-link", 5, (n) => ({ email: uniqueEmail(`ml-ip-${n}`) })],
      ["GET", "/magic-link/verify?token=made-up", 5, () => undefined],
      ["POST", "/email-otp/send-verification-otp", 3, (n) => ({ email: uniqueEmail(`otp-ip-${n}`), type: "sign-in" })],
      ["POST", "/email-otp/request-password-reset", 3, (n) => ({ email: uniqueEmail(`otp-rp-${n}`) })],
      ["POST", "/forget-password/email-otp", 3, (n) => ({ email: uniqueEmail(`otp-fp-${n}`) })],
    ];
    for (const [method, path, max, body] of cases) {
      const one = fromNewIp();
      const send = (n: number) => request(method, `${server.auth}${path}`, { ...one, ...(method === "POST" ? { json: body(n) } : {}) });
      for (let n = 0; n < max; n++) expect((await send(n)).status, `${path} #${n + 1}`).toBeLessThan(429);
      const limited = await send(max);
      expect(limited.status, path).toBe(429);
      expect(limited.body.code, path).toBe("RATE_LIMITED");
    }
  });
});
