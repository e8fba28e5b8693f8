import type * as Undici from "undici";
import type { Dispatcher } from "undici";
import { loadPackage } from "../load.ts";

/** undici, loaded on the first outgoing call: a server without OAuth never pays its ~20 MiB. */
const undici = () => loadPackage("undici") as typeof Undici;
import type { z } from "zod";

/**
 * The one way out (docs/architecture.md style 8): every call to an OAuth provider goes through
 * `request()`. Strict by default, after panva's oauth4webapi: bounded connect, header and body
 * times, no redirects followed (undici 7's `request()` follows none; only its redirect
 * interceptor would), a cap on the response size, and a zod schema for every JSON body
 * (style 3: never `as T` on network data). Errors name the method and the URL without its query
 * string, never a request body: tokens, codes and secrets stay out of every message and log.
 */

export interface HttpLimits {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxResponseBytes: number;
}

export interface HttpClient {
  dispatcher: Dispatcher;
  limits: HttpLimits;
}

/** Tests inject a dispatcher (a MockAgent, or an Agent of their own); otherwise one Agent per instance, made on first use. */
export function createHttpClient(limits: HttpLimits, dispatcher?: Dispatcher): HttpClient {
  let own = dispatcher;
  return {
    limits,
    get dispatcher() {
      own ??= new (undici().Agent)({
        connect: { timeout: limits.connectTimeoutMs },
        headersTimeout: limits.headersTimeoutMs,
        bodyTimeout: limits.bodyTimeoutMs,
      });
      return own;
    },
  };
}

export type HttpFailure = "network" | "timeout" | "redirect" | "status" | "too-large" | "invalid-body";

export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly kind: HttpFailure,
    /** `POST https://host/path`: no query string, no body. */
    readonly target: string,
    readonly status: number | null = null,
    /** RFC 6749 §5.2 `error` and `error_description` of an error body, when it had them. */
    readonly oauthError: { error: string; description?: string } | null = null,
    options?: ErrorOptions,
  ) {
    const detail = oauthError ? ` (${oauthError.error}${oauthError.description ? `: ${oauthError.description}` : ""})` : "";
    super(`${target}: ${kind}${status === null ? "" : ` ${status}`}${detail}`, options);
  }
}

export interface RequestSpec<T> {
  method: "GET" | "POST";
  url: string | URL;
  headers?: Record<string, string>;
  /** Sent as application/x-www-form-urlencoded (RFC 6749 §4.1.3, §6). */
  form?: Record<string, string>;
  /** The 2xx body must parse as JSON and match this. */
  schema: z.ZodType<T>;
}

function describeTarget(method: string, url: URL): string {
  return `${method} ${url.origin}${url.pathname}`;
}

const TIMEOUTS = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function failureOf(err: unknown): HttpFailure {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && TIMEOUTS.has(code) ? "timeout" : "network";
}

/** Drops a body we will not read (its abort error has nowhere to go). */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => {});
  body.destroy();
}

/** Reads at most `max` bytes; more fails without buffering the rest. */
async function readCapped(body: Dispatcher.ResponseData["body"], declared: string | string[] | undefined, max: number, target: string, status: number) {
  if (typeof declared === "string" && Number(declared) > max) {
    discard(body);
    throw new HttpError("too-large", target, status);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > max) {
        discard(body);
        throw new HttpError("too-large", target, status);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(failureOf(err), target, status, null, { cause: err });
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The RFC 6749 §5.2 fields of an error body, shortened: they go to the log. */
function oauthErrorOf(body: unknown): { error: string; description?: string } | null {
  if (typeof body !== "object" || body === null) return null;
  const { error, error_description: description } = body as Record<string, unknown>;
  if (typeof error !== "string") return null;
  return { error: error.slice(0, 64), ...(typeof description === "string" ? { description: description.slice(0, 200) } : {}) };
}

export async function request<T>(http: HttpClient, spec: RequestSpec<T>): Promise<T> {
  const url = new URL(spec.url);
  const target = describeTarget(spec.method, url);
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "portcullis", ...spec.headers };
  let body: string | undefined;
  if (spec.form) {
    body = new URLSearchParams(spec.form).toString();
    headers["content-type"] = "application/x-www-form-urlencoded";
  }
  let res: Dispatcher.ResponseData;
  try {
    res = await undici().request(url, {
      dispatcher: http.dispatcher,
      method: spec.method,
      headers,
      body,
      headersTimeout: http.limits.headersTimeoutMs,
      bodyTimeout: http.limits.bodyTimeoutMs,
    });
  } catch (err) {
    throw new HttpError(failureOf(err), target, null, null, { cause: err });
  }
  const status = res.statusCode;
  if (status >= 300 && status < 400) {
    discard(res.body);
    throw new HttpError("redirect", target, status);
  }
  const text = await readCapped(res.body, res.headers["content-length"], http.limits.maxResponseBytes, target, status);
  const json = parseJson(text);
  if (status < 200 || status >= 300) throw new HttpError("status", target, status, oauthErrorOf(json));
  const parsed = spec.schema.safeParse(json);
  if (!parsed.success) {
    // Paths and messages only: zod does not copy the offending values into its issues.
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
    throw new HttpError("invalid-body", target, status, null, { cause: new Error(json === undefined ? "not JSON" : issues) });
  }
  return parsed.data;
}

/** RFC 6749 §2.3.1: client_id and client_secret form-encoded, then Basic. */
export function basicAuth(clientId: string, clientSecret: string): string {
  const encode = (v: string) => new URLSearchParams([["", v]]).toString().slice(1);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString("base64")}`;
}
