/** Plain HTTP against the bridge, with a tiny cookie jar. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export const TEST_ORIGIN = "http://127.0.0.1:3000";

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Raw body (sent as is); otherwise `json` is serialized. */
  raw?: string | Buffer;
  json?: unknown;
  bearer?: string;
  cookie?: string;
}

export async function request<T = any>(method: string, url: string, opts: RequestOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | Buffer | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.cookie) {
    headers.cookie = opts.cookie;
    headers.origin ??= TEST_ORIGIN;
  }
  const res = await fetch(url, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export const post = <T = any>(url: string, json?: unknown, opts: RequestOptions = {}) =>
  request<T>("POST", url, { ...opts, json: json ?? opts.json });
export const get = <T = any>(url: string, opts: RequestOptions = {}) => request<T>("GET", url, opts);

/** `name=value` of the first Set-Cookie for `name`, or null. */
export function cookieFrom(headers: Headers, name = "portcullis.session_token"): string | null {
  const line = headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return line ? line.split(";")[0]! : null;
}

let counter = 0;
/** A unique, valid email per call. */
export function uniqueEmail(prefix = "user"): string {
  counter += 1;
  return `${prefix}.${Date.now().toString(36)}.${counter}@example.test`;
}
