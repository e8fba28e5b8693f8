import { serialize } from "cookie";
import type { App } from "../src/app.ts";
import { ownCookieName, type Effects } from "../src/trpc/context.ts";
import { EXPOSED_HEADERS } from "./cors.ts";

/** docs/wire-contract.md §3: HttpOnly; SameSite=Lax; Path=/; Secure (and `__Secure-`) on https. */
export function sessionCookieHeader(app: App, effect: NonNullable<Effects["sessionCookie"]>): string {
  const secure = app.origin.startsWith("https:");
  const base = { httpOnly: true, sameSite: "lax" as const, path: "/", secure };
  if ("clear" in effect) return serialize(app.cookieName, "", { ...base, maxAge: 0 });
  return serialize(app.cookieName, effect.token, {
    ...base,
    ...(effect.maxAgeSec === null ? {} : { maxAge: effect.maxAgeSec }),
  });
}

/** Headers a procedure's effects add to any response (bridge or tRPC). */
export function effectHeaders(app: App, effects: Effects): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { ...effects.headers };
  const cookies: string[] = [];
  if (effects.sessionCookie) cookies.push(sessionCookieHeader(app, effects.sessionCookie));
  for (const c of effects.cookies ?? []) {
    const attributes = { httpOnly: true, sameSite: "lax" as const, path: "/", secure: app.origin.startsWith("https:") };
    cookies.push(serialize(ownCookieName(app, c.name), c.value, { ...attributes, ...(c.maxAgeSec === null ? {} : { maxAge: c.maxAgeSec }) }));
  }
  if (cookies.length) headers["set-cookie"] = cookies;
  if (effects.authToken) {
    headers["set-auth-token"] = effects.authToken;
    // The whole list: this header replaces the one rest-bridge/cors.ts set for a trusted origin.
    headers["access-control-expose-headers"] = EXPOSED_HEADERS;
  }
  return headers;
}
