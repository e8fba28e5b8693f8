/**
 * Mail from config: `email.send` delivers instead of SMTP, `email.templates` write
 * each kind in the reader's language (Accept-Language), and without SMTP in production no live
 * link reaches the log unless `email.logLinks` says so. Real SMTP (test/harness/smtp.ts) and a
 * real pino logger (test/harness/log-capture.ts); the links mailed are followed to prove them live.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Verification } from "../../../src/db/entities/index.ts";
import type { MailSendInput, MailTemplateInput } from "../../../src/mail/types.ts";
import { post, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

const PASSWORD = "password123";
const TOKEN_IN_LINK = /\/reset-password\/([A-Za-z0-9_-]{43})/;

let sink: SmtpSink;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink?.close();
});

const servers: TestServer[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});
async function start(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const server = await startTestServer(...args);
  servers.push(server);
  return server;
}

async function signUp(server: TestServer, email: string): Promise<void> {
  expect((await post(`${server.auth}/sign-up/email`, { name: "Pat", email, password: PASSWORD })).status).toBe(200);
}

const requestReset = (server: TestServer, email: string, acceptLanguage?: string) =>
  post(`${server.auth}/request-password-reset`, { email }, acceptLanguage ? { headers: { "accept-language": acceptLanguage } } : {});

/** A template that writes the locales it was given into the mail, in two languages. */
const localized = (input: MailTemplateInput) => {
  const german = input.locales.find((l) => l.startsWith("de"));
  return {
    subject: german ? "Passwort zurücksetzen" : "Reset it",
    text: `locale=${input.locale ?? "none"} locales=${input.locales.join("|")} name=${input.name} ttl=${input.expiresInSec}\n${input.url}\n`,
    html: `<p>${german ? "Hallo" : "Hello"} <a href="${input.url}">link</a></p>`,
  };
};

describe("email.send", () => {
  it("delivers every mail instead of SMTP, with its kind, link and the request's locale", async () => {
    const sent: MailSendInput[] = [];
    const server = await start({ email: { smtpUrl: sink.url, send: async (mail) => void sent.push(mail) } });
    const email = uniqueEmail("hook");
    await signUp(server, email);
    expect((await requestReset(server, email, "fr-CH, fr;q=0.9, en;q=0.5")).status).toBe(200);
    await server.portcullis.app.mailer.settle();
    expect(sent).toHaveLength(1);
    const mail = sent[0]!;
    expect(mail).toMatchObject({ kind: "resetPassword", to: email, subject: "Reset your password", locale: "fr-CH" });
    expect(mail.url).toMatch(TOKEN_IN_LINK);
    expect(mail.text).toContain(mail.url);
    expect(mail.html).toContain("Reset password");
    expect(sink.to(email)).toHaveLength(0); // SMTP is not used when a hook is set
    // The link the hook got is live.
    const token = TOKEN_IN_LINK.exec(mail.url!)![1]!;
    expect((await post(`${server.auth}/reset-password`, { token, newPassword: "brand-new-password" })).status).toBe(200);
    expect((await post(`${server.auth}/sign-in/email`, { email, password: "brand-new-password" })).status).toBe(200);
  });

  it("a hook that throws is a failed send: logged with the request id, its link deleted", async () => {
    const log = captureLog("info");
    const server = await start({ email: { send: () => Promise.reject(new Error("mail API down")) } }, { logger: log.logger });
    const email = uniqueEmail("hook-fails");
    await signUp(server, email);
    await requestReset(server, email);
    await server.portcullis.app.mailer.settle();
    const failure = log.lines().find((l) => l.msg === "email not sent");
    expect(failure).toMatchObject({ level: 50, mail: "password-reset", err: { message: "mail API down" } });
    const request = log.lines().find((l) => l.msg === "request" && l.route === "/request-password-reset");
    expect(failure!.requestId).toEqual(expect.any(String));
    expect(failure!.requestId).toBe(request?.requestId);
    expect(await server.portcullis.app.orm.em.fork().count(Verification, { purpose: "password-reset" })).toBe(0);
  });
});

describe("email.templates", () => {
  it("writes the kind in the reader's language, sent over SMTP; other kinds keep the built-in text", async () => {
    const server = await start({
      email: { smtpUrl: sink.url, templates: { resetPassword: localized } },
      emailAndPassword: { requireEmailVerification: true },
    });
    const email = uniqueEmail("template");
    await signUp(server, email);
    const verify = await sink.waitFor((m) => m.to.includes(email));
    expect(verify.subject).toBe("Verify your email address"); // built-in
    await requestReset(server, email, "it;q=0.3, de-AT;q=0.8, *;q=0.1, en;q=0");
    const mail = await sink.waitFor((m) => m.to.includes(email) && m.subject !== verify.subject);
    expect(mail.subject).toBe("Passwort zurücksetzen");
    expect(mail.text).toContain("locale=de-AT locales=de-AT|it name=Pat ttl=3600");
    expect(mail.html).toContain("Hallo");
    expect(linkFrom(mail, "/reset-password/")).toMatch(TOKEN_IN_LINK);
  });

  it("no Accept-Language: locale undefined, locales empty", async () => {
    const server = await start({ email: { smtpUrl: sink.url, templates: { resetPassword: localized } } });
    const email = uniqueEmail("no-locale");
    await signUp(server, email);
    await requestReset(server, email);
    const mail = await sink.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBe("Reset it");
    expect(mail.text).toContain("locale=none locales= ");
  });

  it("a template that returns no subject fails the send with the key named, and its link is deleted", async () => {
    const log = captureLog("info");
    const server = await start({ email: { smtpUrl: sink.url, templates: { resetPassword: () => ({ subject: "", text: "x" }) } } }, { logger: log.logger });
    const email = uniqueEmail("bad-template");
    await signUp(server, email);
    await requestReset(server, email);
    await server.portcullis.app.mailer.settle();
    const failure = log.lines().find((l) => l.msg === "email not sent");
    expect(failure?.err.message).toMatch(/^email\.templates\.resetPassword returned no valid mail \(subject:/);
    expect(sink.to(email)).toHaveLength(0);
    expect(await server.portcullis.app.orm.em.fork().count(Verification, { purpose: "password-reset" })).toBe(0);
  });

  it("a subject with line breaks cannot add headers", async () => {
    const server = await start({ email: { smtpUrl: sink.url, templates: { resetPassword: (m) => ({ subject: "Hi\r\nBcc: evil@example.test", text: m.url! }) } } });
    const email = uniqueEmail("header");
    await signUp(server, email);
    await requestReset(server, email);
    const mail = await sink.waitFor((m) => m.to.includes(email));
    expect(mail.to).toEqual([email]);
    expect(mail.subject).toBe("Hi Bcc: evil@example.test");
    expect(mail.html).toBe(""); // a template without html sends text only
  });
});

describe("without SMTP", () => {
  const env = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = env;
  });

  it("in production, no live link reaches the log: the send fails, logged, and the link is deleted", async () => {
    process.env.NODE_ENV = "production";
    const log = captureLog("trace");
    const server = await start({}, { logger: log.logger });
    expect(server.portcullis.app.mailer.route).toBe("none");
    const email = uniqueEmail("prod");
    await signUp(server, email);
    await requestReset(server, email);
    await server.portcullis.app.mailer.settle();
    expect(log.text).not.toMatch(TOKEN_IN_LINK);
    expect(log.lines().find((l) => l.msg.startsWith("no SMTP configured"))?.level).toBe(40);
    expect(log.lines().find((l) => l.msg === "email not sent")?.err.message).toMatch(/email\.logLinks/);
    expect(await server.portcullis.app.orm.em.fork().count(Verification, { purpose: "password-reset" })).toBe(0);
  });

  it("in production with email.logLinks: true, the link is logged (and live)", async () => {
    process.env.NODE_ENV = "production";
    const log = captureLog("info");
    const server = await start({ email: { logLinks: true } }, { logger: log.logger });
    const email = uniqueEmail("prod-logged");
    await signUp(server, email);
    await requestReset(server, email);
    await server.portcullis.app.mailer.settle();
    const line = log.lines().find((l) => l.mail?.to === email);
    expect(line?.mail).toMatchObject({ kind: "resetPassword", subject: "Reset your password" });
    const token = TOKEN_IN_LINK.exec(line!.mail.link)![1]!;
    expect((await post(`${server.auth}/reset-password`, { token, newPassword: "brand-new-password" })).status).toBe(200);
  });

  it("outside production the link is logged by default; email.logLinks: false keeps it out", async () => {
    const log = captureLog("info");
    const server = await start({}, { logger: log.logger });
    const email = uniqueEmail("dev");
    await signUp(server, email);
    await requestReset(server, email);
    await server.portcullis.app.mailer.settle();
    expect(log.lines().find((l) => l.mail?.to === email)?.mail.link).toMatch(TOKEN_IN_LINK);

    const quiet = captureLog("trace");
    const off = await start({ email: { logLinks: false } }, { logger: quiet.logger });
    await signUp(off, email);
    await requestReset(off, email);
    await off.portcullis.app.mailer.settle();
    expect(quiet.text).not.toMatch(TOKEN_IN_LINK);
  });
});
