import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { SECOND } from "../../harness/clock.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, type SignedInUser } from "../../harness/admin-helpers.ts";

interface Seeded {
  id: string;
  email: string;
  name: string;
  role: string;
  emailVerified: boolean;
  banned: boolean;
  createdAt: string;
}

let server: TestServer;
let admin: SignedInUser;
/** Every user in the database, admin first, in creation order (one fake second apart). */
const all: Seeded[] = [];

const pad = (i: number) => String(i).padStart(3, "0");
const COUNT = 210;

beforeAll(async () => {
  server = await startTestServer({ admin: { roles: { support: { user: ["list"] } } } });
  admin = await bootstrapAdmin(server, "root@list.test");
  all.push({ ...(admin.user as Seeded) });
  // No passwords: no argon2 per user, so 200+ users take a few seconds.
  const specs = [
    ...Array.from({ length: COUNT }, (_, i) => ({
      email: `user${pad(i)}@${i % 3 === 0 ? "alpha" : "beta"}.test`,
      name: `${i % 2 ? "Member" : "MEMBER"} ${pad(i)}`,
      role: i % 7 === 0 ? "support" : undefined,
      emailVerified: i % 4 === 0,
    })),
    // LIKE wildcards in a search must match themselves: a_b must not find axb.
    ...Array.from({ length: 5 }, (_, k) => ({ email: `a_b${k}@under.test`, name: `Under ${k}`, role: undefined, emailVerified: false })),
    ...Array.from({ length: 5 }, (_, k) => ({ email: `axb${k}@under.test`, name: `Cross ${k}`, role: undefined, emailVerified: false })),
  ];
  for (const spec of specs) {
    server.clock.advance(SECOND);
    const res = await adminPost(
      server,
      "create-user",
      { email: spec.email, name: spec.name, ...(spec.role ? { role: spec.role } : {}), data: { emailVerified: spec.emailVerified } },
      admin.token,
    );
    expect(res.status, res.text).toBe(200);
    all.push(res.body.user);
  }
  // Three banned users.
  for (const u of [all[5]!, all[50]!, all[150]!]) {
    const res = await adminPost(server, "ban-user", { userId: u.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    u.banned = true;
  }
}, 120_000);
afterAll(async () => {
  await server?.close();
});

type Query = Record<string, string | number | boolean>;
async function list(query: Query) {
  const res = await adminGet(server, "list-users", query, admin.token);
  expect(res.status, res.text).toBe(200);
  return res.body as { users: Seeded[]; total: number; limit: number; offset: number };
}
const ids = (users: { id: string }[]) => users.map((u) => u.id);

describe("list-users", () => {
  it("defaults to 100 per page from offset 0, oldest first, with the total of all users", async () => {
    const page = await list({});
    expect(all.length).toBe(COUNT + 11);
    expect(page).toMatchObject({ total: all.length, limit: 100, offset: 0 });
    expect(ids(page.users)).toEqual(ids(all.slice(0, 100)));
    expect(Object.keys(page.users[0]!).sort()).toEqual(
      ["id", "name", "email", "emailVerified", "image", "username", "displayUsername", "role", "banned", "banReason", "banExpires", "twoFactorEnabled", "createdAt", "updatedAt"].sort(),
    );
  });

  it("pages through everyone with limit and offset: no gaps, no repeats, the same total on every page", async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < all.length + 40; offset += 40) {
      const page = await list({ limit: 40, offset });
      expect(page.total).toBe(all.length);
      expect(page.offset).toBe(offset);
      seen.push(...ids(page.users));
    }
    expect(seen).toEqual(ids(all));
    expect((await list({ limit: 40, offset: all.length })).users).toEqual([]);
  });

  it("searches email or name with contains / starts_with / ends_with, case-insensitively, counting in the database", async () => {
    const alpha = all.filter((u) => u.email.includes("alpha"));
    const r1 = await list({ searchValue: "ALPHA", limit: 10 });
    expect(r1.total).toBe(alpha.length);
    expect(ids(r1.users)).toEqual(ids(alpha.slice(0, 10)));

    const r2 = await list({ searchValue: "user00", searchOperator: "starts_with" });
    expect(r2.total).toBe(10);
    expect(r2.users.every((u) => u.email.startsWith("user00"))).toBe(true);

    const r3 = await list({ searchValue: "beta.test", searchOperator: "ends_with", limit: 5, offset: 5 });
    expect(r3.total).toBe(all.filter((u) => u.email.endsWith("beta.test")).length);
    expect(ids(r3.users)).toEqual(ids(all.filter((u) => u.email.endsWith("beta.test")).slice(5, 10)));

    const r4 = await list({ searchField: "name", searchValue: "member 01", searchOperator: "contains" });
    expect(r4.total).toBe(10);
    expect(r4.users.map((u) => u.name.toLowerCase())).toEqual(Array.from({ length: 10 }, (_, k) => `member 0${10 + k}`));
  });

  it("treats LIKE wildcards in the search as plain characters", async () => {
    const r = await list({ searchValue: "a_b" });
    expect(r.total).toBe(5);
    expect(r.users.every((u) => u.email.startsWith("a_b"))).toBe(true);
    expect((await list({ searchValue: "%" })).total).toBe(0);
    expect((await list({ searchValue: "\\" })).total).toBe(0);
  });

  it("filters with eq, ne, in, not_in on text fields", async () => {
    const support = all.filter((u) => u.role === "support");
    expect((await list({ filterField: "role", filterValue: "support" })).total).toBe(support.length);
    expect((await list({ filterField: "role", filterOperator: "ne", filterValue: "user" })).total).toBe(support.length + 1);
    const inRoles = await list({ filterField: "role", filterOperator: "in", filterValue: "support,admin", limit: 1000 });
    expect(new Set(ids(inRoles.users))).toEqual(new Set([admin.id, ...ids(support)]));
    expect((await list({ filterField: "role", filterOperator: "not_in", filterValue: "support,admin" })).total).toBe(all.length - support.length - 1);
    const byEmail = await list({ filterField: "email", filterValue: "USER042@ALPHA.TEST" });
    expect(ids(byEmail.users)).toEqual([all[43]!.id]);
    expect((await list({ filterField: "email", filterOperator: "contains", filterValue: "@under." })).total).toBe(10);
    expect((await list({ filterField: "id", filterValue: all[7]!.id })).users[0]!.email).toBe(all[7]!.email);
  });

  it("filters booleans from \"true\"/\"false\" and dates from ISO strings", async () => {
    expect((await list({ filterField: "emailVerified", filterValue: "true" })).total).toBe(all.filter((u) => u.emailVerified).length);
    expect((await list({ filterField: "emailVerified", filterOperator: "ne", filterValue: "true" })).total).toBe(all.filter((u) => !u.emailVerified).length);
    const banned = await list({ filterField: "banned", filterValue: "true" });
    expect(new Set(ids(banned.users))).toEqual(new Set([all[5]!.id, all[50]!.id, all[150]!.id]));
    expect((await list({ filterField: "banned", filterValue: false })).total).toBe(all.length - 3);

    const pivot = all[100]!.createdAt;
    expect((await list({ filterField: "createdAt", filterOperator: "gte", filterValue: pivot })).total).toBe(all.length - 100);
    expect((await list({ filterField: "createdAt", filterOperator: "gt", filterValue: pivot })).total).toBe(all.length - 101);
    expect((await list({ filterField: "createdAt", filterOperator: "lt", filterValue: pivot })).total).toBe(100);
    expect((await list({ filterField: "createdAt", filterOperator: "lte", filterValue: pivot })).total).toBe(101);
    expect((await list({ filterField: "createdAt", filterValue: pivot })).users.map((u) => u.id)).toEqual([all[100]!.id]);
  });

  it("combines a search and a filter, and the total follows both", async () => {
    const expected = all.filter((u) => u.email.includes("alpha") && u.role === "support");
    const r = await list({ searchValue: "alpha", filterField: "role", filterValue: "support", limit: 3 });
    expect(r.total).toBe(expected.length);
    expect(ids(r.users)).toEqual(ids(expected.slice(0, 3)));
  });

  it("sorts by a whitelisted field in either direction", async () => {
    const users = all.filter((u) => u.email.startsWith("user"));
    const desc = await list({ searchValue: "user", searchOperator: "starts_with", sortBy: "email", sortDirection: "desc", limit: 25 });
    expect(desc.users.map((u) => u.email)).toEqual(users.map((u) => u.email).sort().reverse().slice(0, 25));
    const newest = await list({ sortBy: "createdAt", sortDirection: "desc", limit: 3 });
    expect(ids(newest.users)).toEqual(ids(all.slice(-3).reverse()));
  });

  it("rejects what is not whitelisted or does not fit the field: 400 VALIDATION_ERROR", async () => {
    const bad: Query[] = [
      { filterField: "password", filterValue: "x" },
      { filterField: "email", filterOperator: "regex", filterValue: "x" },
      { filterField: "banned", filterValue: "maybe" },
      { filterField: "banned", filterOperator: "gt", filterValue: "true" },
      { filterField: "banned", filterOperator: "contains", filterValue: "t" },
      { filterField: "createdAt", filterOperator: "gt", filterValue: "yesterday" },
      { filterField: "id", filterValue: "not-a-uuid" },
      { searchField: "role", searchValue: "x" },
      { sortBy: "password" },
      { sortDirection: "sideways" },
      { limit: 1001 },
      { limit: 0 },
      { limit: -1 },
      { offset: "x" },
      // A NUL character would cut the statement short on SQLite (found by the fuzz test).
      { filterValue: "a\u0000b" },
      { filterField: "name", filterOperator: "contains", filterValue: "\u0000" },
      { searchValue: "a\u0000b" },
    ];
    for (const q of bad) expectError(await adminGet(server, "list-users", q, admin.token), 400, "VALIDATION_ERROR");
  });

  it("lets a custom role with user:list list users", async () => {
    const supportUser = all.find((u) => u.role === "support")!;
    await adminPost(server, "set-user-password", { userId: supportUser.id, newPassword: "support password" }, admin.token);
    const signIn = await fetch(`${server.auth}/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: supportUser.email, password: "support password" }),
    });
    const { token } = (await signIn.json()) as { token: string };
    const res = await adminGet(server, "list-users", { limit: 1 }, token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(all.length);
  });
});
