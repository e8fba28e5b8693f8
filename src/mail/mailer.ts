import type * as Nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { ResolvedConfig } from "../config/index.ts";
import { loadPackage } from "../load.ts";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The action link the message carries; the no-SMTP fallback logs it. */
  link?: string;
  /** A one-time code the message carries instead of a link (two-factor email OTP); logged the same way. */
  code?: string;
}

export interface Mailer {
  /** True when messages go out over SMTP; false when they only reach the log. */
  readonly delivers: boolean;
  /** Sends one message; rejects when the SMTP server is unreachable or refuses it. */
  send(message: MailMessage, meta?: { requestId?: string }): Promise<void>;
  /**
   * Runs `work` after the current response is written, so an answer never waits on (or
   * reveals) a lookup and an SMTP round trip. `work` handles its own failures; anything
   * that escapes is logged.
   */
  later(work: () => Promise<void>): void;
  /** Resolves once every deferred job has finished (close() and tests wait on it). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * SMTP when `email.smtpUrl` is set (SMTP_URL), otherwise the log: `npm start` needs no mail
 * server, and the log line carries the link a developer clicks.
 */
export function createMailer(config: ResolvedConfig, logger: Logger): Mailer {
  const { smtpUrl, from } = config.email;
  // Bounded timeouts: a stuck server must not hold close() (which waits for deferred sends).
  const transport = smtpUrl
    ? (loadPackage("nodemailer") as typeof Nodemailer).createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 })
    : null;
  if (!transport) {
    // Links carry live tokens: fine in a developer's terminal, worth a warning in production.
    const level = process.env.NODE_ENV === "production" ? "warn" : "info";
    logger[level]("no SMTP configured (SMTP_URL or email.smtpUrl): email links and codes are written to this log");
  }
  const pending = new Set<Promise<void>>();
  const settle = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };

  return {
    delivers: transport !== null,
    async send(message, meta = {}) {
      if (!transport) {
        logger.info({ requestId: meta.requestId, mail: { to: message.to, subject: message.subject, link: message.link, code: message.code } }, "email (no SMTP configured)");
        return;
      }
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    },
    later(work) {
      // setImmediate: after the procedure's promise chain has written the response.
      const job: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
        .then(work)
        .catch((err: unknown) => logger.error({ err }, "deferred email job failed"))
        .finally(() => pending.delete(job));
      pending.add(job);
    },
    settle,
    async close() {
      await settle();
      transport?.close();
    },
  };
}
