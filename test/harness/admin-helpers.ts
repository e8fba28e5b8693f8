import { expect } from "vitest";
import { createAdmin } from "../../src/modules/admin/bootstrap.service.ts";
import { cookieFrom, get, post, uniqueEmail, type Reply } from "./http.ts";
import type { TestServer } from "./server.ts";

export const PASSWORD = "correct horse battery";

export interface SignedInUser {
  id: string;
  email: string;
  token: string;
  /** `portcullis.session_token=...` */
  cookie: string;
  user: Record<string, any>;
}

export async function signUp(
  server: TestServer,
  opts: { email?: string; name?: string; username?: string; password?: string } = {},
): Promise<SignedInUser> {
  const email = opts.email ?? uniqueEmail("admin-test");
  const res = await post(`${server.auth}/sign-up/email`, {
    name: opts.name ?? "Test User",
    email,
    password: opts.password ?? PASSWORD,
    ...(opts.username ? { username: opts.username } : {}),
  });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id, email, token: res.body.token, cookie: cookieFrom(res.headers)!, user: res.body.user };
}

export async function signIn(server: TestServer, email: string, password = PASSWORD): Promise<SignedInUser> {
  const res = await post(`${server.auth}/sign-in/email`, { email, password });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id, email, token: res.body.token, cookie: cookieFrom(res.headers)!, user: res.body.user };
}

/** The first admin, the way an operator makes one (the CLI's bootstrap), then signed in. */
export async function bootstrapAdmin(server: TestServer, email = uniqueEmail("root")): Promise<SignedInUser> {
  const { app } = server.portcullis;
  await createAdmin(app.orm.em.fork(), app.config, { email, password: PASSWORD, name: "Root Admin" });
  return signIn(server, email);
}

/** POST {auth}/admin/{path} with a bearer token. */
export function adminPost(server: TestServer, path: string, body: unknown, token?: string): Promise<Reply> {
  return post(`${server.auth}/admin/${path}`, body, token ? { bearer: token } : {});
}

/** GET {auth}/admin/{path}?query with a bearer token. */
export function adminGet(server: TestServer, path: string, query: Record<string, string | number | boolean>, token?: string): Promise<Reply> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return get(`${server.auth}/admin/${path}${qs.size ? `?${qs}` : ""}`, token ? { bearer: token } : {});
}

/** Asserts the contract's error body. */
export function expectError(res: Reply, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.code, res.text).toBe(code);
  expect(typeof res.body.message).toBe("string");
}

/** The SQL statements the service runs while `fn` runs, with their parameters inlined (what the database receives). */
export async function captureSql<T>(server: TestServer, fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { orm } = server.portcullis.app;
  const statements: string[] = [];
  orm.config.set("onQuery", (sql: string, params: unknown[]) => {
    statements.push(orm.em.getPlatform().formatQuery(sql, params as never[]));
    return sql;
  });
  try {
    return { result: await fn(), statements };
  } finally {
    orm.config.set("onQuery", (sql: string) => sql);
  }
}

/** One list-users page as `token` (an admin), which must answer 200. */
export async function listUsersPage<R = { id: string }>(server: TestServer, token: string, query: Record<string, string | number>) {
  const res = await adminGet(server, "list-users", query, token);
  expect(res.status, res.text).toBe(200);
  return res.body as { users: R[]; total: number; limit: number; offset: number };
}

/** The ids of a page's users, in order. */
export const idsOf = (users: { id: string }[]) => users.map((u) => u.id);
