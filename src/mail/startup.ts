import type * as Nodemailer from "nodemailer";
import type { Logger } from "pino";
import { ConfigError, type ResolvedConfig } from "../config/index.ts";
import { loadPackage } from "../load.ts";
import { mailRoute } from "./mailer.ts";

const VERIFY_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 5_000 } as const;

/** The SMTP URL as it may be shown: no password. */
function shown(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  if (url.password) url.password = "***";
  return url.toString();
}

/** Why nodemailer's verify() failed, in words an operator acts on. */
function smtpProblem(smtpUrl: string, err: unknown): string {
  const e = (err ?? {}) as { code?: string; responseCode?: number; message?: string };
  const message = (e.message ?? String(err)).replace(/\s+/g, " ");
  const at = `the SMTP server at ${shown(smtpUrl)}`;
  // nodemailer wraps socket errors (code ESOCKET/EDNS); the cause's code is in the message.
  if (e.code === "EAUTH") return `${at} refused the credentials (${e.responseCode ?? "auth"}): check the user and password in the URL`;
  if (/ECONNREFUSED/.test(message)) return `nothing accepts connections at ${shown(smtpUrl)} (connection refused)`;
  if (e.code === "EDNS" || /ENOTFOUND|EAI_AGAIN/.test(message)) return `the host of ${shown(smtpUrl)} does not resolve`;
  if (e.code === "ETIMEDOUT" || /ETIMEDOUT|timeout/i.test(message)) return `${at} did not answer within 5 s`;
  if (e.code === "ETLS" || /SSL|TLS|certificate/i.test(message)) return `${at}: TLS failed (${message}); smtps:// is TLS from the first byte, smtp:// upgrades with STARTTLS`;
  return `${at} did not accept a connection (${message})`;
}

/**
 * At start: how mail will leave, said once, and SMTP checked (connect, EHLO, AUTH: nodemailer's
 * verify()). In production a failed check stops the start (ConfigError naming email.smtpUrl):
 * better than reset and verification mails failing one by one later. Elsewhere it is a warning,
 * and the check does not hold the start up.
 */
export async function checkMailSetup(config: ResolvedConfig, logger: Logger): Promise<void> {
  const production = process.env.NODE_ENV === "production";
  const { smtpUrl } = config.email;
  const route = mailRoute(config);
  if (route === "hook") {
    if (smtpUrl) logger.warn("email.send is set: it delivers every mail, email.smtpUrl (SMTP_URL) is not used");
    return;
  }
  if (route === "log") {
    const level = production ? "warn" : "info";
    logger[level]("no SMTP configured (SMTP_URL or email.smtpUrl): email links and codes are written to this log");
    return;
  }
  if (route === "none") {
    logger.warn("no SMTP configured (SMTP_URL or email.smtpUrl) and no email.send: no mail is sent, and links are not logged in production (email.logLinks)");
    return;
  }
  const check = async () => {
    const transport = (loadPackage("nodemailer") as typeof Nodemailer).createTransport({ url: smtpUrl, ...VERIFY_TIMEOUTS });
    try {
      await transport.verify();
      return null;
    } catch (err) {
      return smtpProblem(smtpUrl!, err);
    } finally {
      transport.close();
    }
  };
  if (!production) {
    void check().then((problem) => problem && logger.warn({ key: "email.smtpUrl" }, `email.smtpUrl: ${problem}; mails will fail until it answers`));
    return;
  }
  const problem = await check();
  if (problem) {
    throw Object.assign(new ConfigError(`Invalid Portcullis config:\n  email.smtpUrl: ${problem}`), { issues: [{ key: "email.smtpUrl", message: problem }] });
  }
}
