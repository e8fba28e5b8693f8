import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseCookies } from "cookie";
import type { App } from "../src/app.ts";
import { readApiKey } from "../src/core/session/api-key-principal.ts";
import { answerGetSession, answerKeySession, type GetSessionAnswer } from "../src/core/session/get-session.ts";
import { readSessionToken } from "../src/trpc/context.ts";
import { sessionCookieHeader } from "./cookies.ts";
import { checkRateLimit, type ClientIpOf } from "./guards.ts";

/**
 * GET {base}/get-session, the hot path, called by the bridge directly: no tRPC caller, no
 * context object, no URL parsing, no header copies, no promise when the answer is at hand
 * (cached, or SQLite), and the cached answer's JSON written with one `res.end`. The same
 * function answers the tRPC procedure (src/core/session/get-session.ts answerGetSession).
 */
export function serveGetSession(app: App, req: IncomingMessage, res: ServerResponse, ipOf: ClientIpOf, requestId: string): Promise<void> | undefined {
  if (app.rateLimiter.storage !== "off") return checkRateLimit(app, ipOf(req), "/get-session").then(() => answer(app, req, res, requestId));
  return answer(app, req, res, requestId);
}

function answer(app: App, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> | undefined {
  const key = readApiKey(app, req.headers);
  let found;
  if (key) found = answerKeySession(app, key);
  else {
    const { token, source } = readSessionToken(app, req.headers);
    const readCookie = () => (req.headers.cookie ? (parseCookies(req.headers.cookie)[app.cookieName] ?? null) : null);
    found = answerGetSession(app, token, source, readCookie);
  }
  if (found instanceof Promise) return found.then((a) => write(app, res, a, requestId));
  write(app, res, found, requestId);
  return undefined;
}

function write(app: App, res: ServerResponse, a: GetSessionAnswer, requestId: string): void {
  const entry = a.resolved?.entry;
  const head = [
    "content-type", "application/json; charset=utf-8",
    "content-length", entry ? String(entry.bytes) : "4",
    "cache-control", "no-store",
    "x-request-id", requestId,
  ];
  if (a.cookie) head.push("set-cookie", sessionCookieHeader(app, a.cookie));
  if (a.headers) for (const name in a.headers) head.push(name, a.headers[name]!);
  res.writeHead(200, head);
  res.end(entry ? entry.json : "null");
}
