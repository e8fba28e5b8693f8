import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { SMTPServer } from "smtp-server";

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package): Portcullis talks SMTP to it
 * through nodemailer exactly as it would to a production relay, and tests read the links out
 * of what arrived. Plain SMTP, no STARTTLS, AUTH optional.
 */
export interface ReceivedMail {
  /** RCPT TO addresses. */
  to: string[];
  from: string;
  subject: string;
  /** Decoded text/plain part. */
  text: string;
  /** Decoded text/html part. */
  html: string;
  raw: string;
}

export interface SmtpSink {
  /** smtp://127.0.0.1:<port> for `email.smtpUrl`. */
  url: string;
  messages: ReceivedMail[];
  /** Refuse every message (554) from now on, to exercise a failed send. */
  rejectAll(reject: boolean): void;
  /** Hold each message this long before answering DATA: a slow relay. */
  delayEach(ms: number): void;
  /** The first message (already received or arriving within `timeoutMs`) matching `predicate`. */
  waitFor(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Messages sent to one address, in arrival order. */
  to(address: string): ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let reject = false;
  let delayMs = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", async () => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (reject) return callback(Object.assign(new Error("Message rejected by the test sink"), { responseCode: 554 }));
        const raw = Buffer.concat(chunks).toString("utf8");
        messages.push({
          ...parseMessage(raw),
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          raw,
        });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, rejectListen) => {
    server.server.once("error", rejectListen);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejectAll(value) {
      reject = value;
    },
    delayEach(ms) {
      delayMs = ms;
    },
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, rejectWait) => {
        const check = () => {
          const hit = messages.find(predicate);
          if (!hit) return false;
          clearTimeout(timer);
          waiters.delete(onMail);
          resolve(hit);
          return true;
        };
        const onMail = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(onMail);
          rejectWait(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        if (!check()) waiters.add(onMail);
      });
    },
    to(address) {
      return messages.filter((m) => m.to.includes(address.toLowerCase()));
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The first http(s) link in a mail's text part (optionally: the first containing `contains`). */
export function linkFrom(mail: ReceivedMail, contains = ""): string {
  const links = mail.text.match(/https?:\/\/[^\s<>"]+/g) ?? [];
  const link = links.find((l) => l.includes(contains));
  if (!link) throw new Error(`no link containing "${contains}" in:\n${mail.text}`);
  return link;
}

/** A link mailed for the public URL, pointed at the test server that actually listens. */
export function onServer(link: string, serverUrl: string): string {
  const url = new URL(link);
  return `${serverUrl}${url.pathname}${url.search}`;
}

// --- A small MIME reader: enough for what nodemailer writes (multipart, QP, base64). ---

interface Part {
  headers: Map<string, string>;
  body: string;
}

function splitPart(raw: string): Part {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at === -1 ? raw : raw.slice(0, at);
  const body = at === -1 ? "" : raw.slice(at).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeBody(part: Part): string {
  const encoding = (part.headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (encoding === "base64") return Buffer.from(part.body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding === "quoted-printable") {
    const soft = part.body.replace(/=\r?\n/g, "");
    const bytes: number[] = [];
    for (let i = 0; i < soft.length; i++) {
      if (soft[i] === "=" && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
        bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(...Buffer.from(soft[i]!, "utf8"));
    }
    return Buffer.from(bytes).toString("utf8");
  }
  return part.body;
}

/** RFC 2047 encoded words in a header (a subject with non-ASCII characters). */
function decodeHeader(value: string): string {
  return value.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === "B"
      ? Buffer.from(text, "base64").toString("utf8")
      : decodeBody({ headers: new Map([["content-transfer-encoding", "quoted-printable"]]), body: text.replace(/_/g, " ") }),
  );
}

function collect(part: Part, out: { text: string; html: string }): void {
  const type = part.headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith("multipart/") && boundary) {
    const sections = part.body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith("--")) break;
      collect(splitPart(section.replace(/^\r?\n/, "")), out);
    }
    return;
  }
  if (type.toLowerCase().startsWith("text/html")) out.html ||= decodeBody(part);
  else if (type.toLowerCase().startsWith("text/plain")) out.text ||= decodeBody(part);
}

function parseMessage(raw: string): { subject: string; text: string; html: string } {
  const top = splitPart(raw);
  const out = { text: "", html: "" };
  collect(top, out);
  return { subject: decodeHeader(top.headers.get("subject") ?? ""), ...out };
}

/**
 * A pino logger writing JSON lines into an array: the no-SMTP fallback and failed sends are
 * observable only in the log (pass it as startTestServer(config, { logger })).
 */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

/** What the `email.send` hook received of one mail. */
export interface HookedMail {
  kind: string;
  to: string;
  url?: string | undefined;
  code?: string | undefined;
  otpType?: string | undefined;
}

/**
 * An `email.send` hook that keeps every mail (pass `send` as the config's `email.send`), and the
 * newest mail of a kind to an address once the server's mailer has settled.
 */
export function mailHook() {
  const mails: HookedMail[] = [];
  return {
    mails,
    send: (m: HookedMail) => void mails.push({ kind: m.kind, to: m.to, url: m.url, code: m.code, otpType: m.otpType }),
    async last(server: { portcullis: { app: { mailer: { settle(): Promise<void> } } } }, to: string, kind: string): Promise<HookedMail> {
      await server.portcullis.app.mailer.settle();
      const mail = mails.filter((m) => m.to === to && m.kind === kind).at(-1);
      if (!mail) throw new Error(`no ${kind} mail to ${to}`);
      return mail;
    },
  };
}
