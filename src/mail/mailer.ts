import type * as Nodemailer from "nodemailer";
import type { Logger } from "pino";
import { z } from "zod";
import type { ResolvedConfig } from "../config/index.ts";
import { loadPackage } from "../load.ts";
import { acceptedLocales } from "./locale.ts";
import { DEFAULT_TEMPLATES } from "./templates.ts";
import type { MailContent, MailDraft, MailRequest } from "./types.ts";

export type { MailDraft, MailRequest } from "./types.ts";

/** How mail leaves: the `email.send` hook, SMTP, the log (links included), or not at all. */
export type MailRoute = "hook" | "smtp" | "log" | "none";

export interface Mailer {
  readonly route: MailRoute;
  /** True when messages go out (a send hook or SMTP); false when they only reach the log, or nothing. */
  readonly delivers: boolean;
  /**
   * Writes the draft (the kind's template, in the request's locale) and sends it. Rejects when
   * the template or the hook throws, SMTP refuses, or there is no way out (route "none").
   */
  send(draft: MailDraft, req?: MailRequest): Promise<void>;
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

/** Links and codes go to the log only when told, or outside production: there they are live credentials. */
export function logsLinks(config: ResolvedConfig): boolean {
  return config.email.logLinks ?? process.env.NODE_ENV !== "production";
}

export function mailRoute(config: ResolvedConfig): MailRoute {
  if (config.email.send) return "hook";
  if (config.email.smtpUrl) return "smtp";
  return logsLinks(config) ? "log" : "none";
}

// Bounded timeouts: a stuck server must not hold close() (which waits for deferred sends).
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/** A template's answer, checked: a header line cannot carry a line break (no header injection). */
const contentSchema = z.object({
  subject: z.string().min(1).max(998).transform((s) => s.replace(/[\r\n]+/g, " ")),
  text: z.string(),
  html: z.string().optional(),
});

async function write(config: ResolvedConfig, draft: MailDraft, locales: string[]): Promise<MailContent> {
  const template = config.email.templates[draft.kind] ?? DEFAULT_TEMPLATES[draft.kind];
  const written = await template({ ...draft, locale: locales[0], locales });
  const parsed = contentSchema.safeParse(written);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`email.templates.${draft.kind} returned no valid mail (${issue.path.join(".") || "value"}: ${issue.message})`);
  }
  return parsed.data;
}

/**
 * The `email.send` hook when set; else SMTP when `email.smtpUrl` is set (SMTP_URL); else the log,
 * where each link and code is written for a developer to click, outside production or with
 * `email.logLinks: true`; else (production) no mail leaves, and each send fails (logged).
 */
export function createMailer(config: ResolvedConfig, logger: Logger): Mailer {
  const { smtpUrl, from, send: hook } = config.email;
  const route = mailRoute(config);
  let transport: Nodemailer.Transporter | null = null;
  const smtp = () => {
    // Created on first use: a process that sends no mail never loads nodemailer.
    transport ??= (loadPackage("nodemailer") as typeof Nodemailer).createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
    return transport;
  };
  const pending = new Set<Promise<void>>();
  const settle = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };

  return {
    route,
    delivers: route === "hook" || route === "smtp",
    async send(draft, req = {}) {
      const locales = acceptedLocales(req.acceptLanguage);
      const mail = await write(config, draft, locales);
      if (route === "hook") {
        await hook!({ kind: draft.kind, to: draft.to, ...mail, url: draft.url, code: draft.code, otpType: draft.otpType, metadata: draft.metadata, locale: locales[0] });
      } else if (route === "smtp") {
        await smtp().sendMail({ from, to: draft.to, subject: mail.subject, text: mail.text, ...(mail.html === undefined ? {} : { html: mail.html }) });
      } else if (route === "log") {
        logger.info({ requestId: req.requestId, mail: { kind: draft.kind, to: draft.to, subject: mail.subject, link: draft.url, code: draft.code } }, "email (no SMTP configured)");
      } else {
        throw new Error("no way to send mail: set email.smtpUrl (SMTP_URL) or email.send; links are not logged in production unless email.logLinks is true");
      }
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
