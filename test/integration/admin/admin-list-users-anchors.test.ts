import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { ANCHORS_FROM, STRIDE } from "../../../src/modules/admin/list-users.anchors.ts";
import { MAX_AGE_MS } from "../../../src/modules/admin/list-users.totals.ts";
import { DAY, SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, captureSql, idsOf, listUsersPage, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * list-users pages deep inside a large list start from keyset anchors (list-users.anchors.ts):
 * over 130,000 users, a page in the middle skips more than ANCHORS_FROM entries from either
 * end. Every page is compared with the same list sorted here, in memory: the anchored read
 * must give exactly what the offset read gives, for ties, descending orders and filters, and
 * fall back to the offset read when its anchor user is gone.
 */

interface Row {
  id: string;
  email: string;
  name: string;
  role: string;
}

const N = 130_000;
const MIDDLE = 65_000;
const pad = (i: number, n: number) => String(i).padStart(n, "0");

let server: TestServer;
let admin: SignedInUser;
/** Every user, in the default order (createdAt, id): the seeded ones, then the admin. */
let all: Row[] = [];

const capture = <T>(fn: () => Promise<T>) => captureSql(server, fn);

type Query = Record<string, string | number>;
const list = (query: Query) => listUsersPage<Row>(server, admin.token, query);
const ids = idsOf;
/** The statement of an anchored page: the order's columns compared with the anchor user's. */
const anchored = (statements: string[]) => statements.some((s) => /\) (>=|<=) \(select .+ from users a where a\.id = '/.test(s));

/** Asks for the page until it is read from an anchor (built in the background by the first ask), then returns it. */
async function anchoredPage(query: Query) {
  let last: { result: { users: Row[]; total: number }; statements: string[] } | undefined;
  await expect
    .poll(async () => {
      last = await capture(() => list(query));
      return anchored(last.statements);
    }, { timeout: 20_000, interval: 100 })
    .toBe(true);
  return last!.result;
}

beforeAll(async () => {
  server = await startTestServer();
  const em = server.portcullis.app.orm.em.fork();
  const base = server.clock.now().getTime() - 30 * DAY;
  const rows = Array.from({ length: N }, (_, i) => {
    const at = new Date(base + i * SECOND);
    return {
      id: randomUUID(),
      email: `p${pad(i, 6)}@anchors.test`,
      // 130 users share each name: the id breaks the ties.
      name: `Person ${pad(i % 1000, 3)}`,
      role: i % 5 === 0 ? "support" : "user",
      emailVerified: false,
      createdAt: at,
      updatedAt: at,
    };
  });
  for (let i = 0; i < rows.length; i += 2000) await em.insertMany(User, rows.slice(i, i + 2000));
  all = rows.map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role }));
  admin = await bootstrapAdmin(server, "root@anchors.test");
  all.push({ id: admin.id, email: admin.email, name: admin.user.name, role: "admin" });
  await em.getConnection().execute(testDialect === "postgres" ? "analyze users" : "analyze");
}, 180_000);
afterAll(async () => {
  await server?.close();
});

describe(`list-users keyset anchors over ${N.toLocaleString("en")} users (${testDialect})`, () => {
  it("a middle page is first read by offset, then from the nearest anchor, with the same users", async () => {
    expect(Math.min(MIDDLE, all.length - MIDDLE - 100)).toBeGreaterThan(ANCHORS_FROM);
    const first = await capture(() => list({ limit: 100, offset: MIDDLE }));
    expect(anchored(first.statements)).toBe(false);
    expect(ids(first.result.users)).toEqual(ids(all.slice(MIDDLE, MIDDLE + 100)));
    // Both ends are more than ANCHORS_FROM away for offsets in (50,000, 79,900).
    for (const offset of [MIDDLE, MIDDLE + 1, 6 * STRIDE - 1, 6 * STRIDE, 7 * STRIDE + 5, all.length - ANCHORS_FROM - 200]) {
      const page = await anchoredPage({ limit: 100, offset });
      expect(page.total).toBe(all.length);
      expect(ids(page.users), `offset ${offset}`).toEqual(ids(all.slice(offset, offset + 100)));
    }
  });

  it("descending orders with ties, and a filter, give the offset read's users", async () => {
    const byNameDesc = [...all].sort((a, b) => (a.name === b.name ? (a.id < b.id ? 1 : -1) : a.name < b.name ? 1 : -1));
    const page = await anchoredPage({ sortBy: "name", sortDirection: "desc", limit: 150, offset: 67_123 });
    expect(ids(page.users)).toEqual(ids(byNameDesc.slice(67_123, 67_123 + 150)));

    const byEmailDesc = [...all].sort((a, b) => (a.email < b.email ? 1 : -1));
    const emails = await anchoredPage({ sortBy: "email", sortDirection: "desc", limit: 100, offset: MIDDLE });
    expect(ids(emails.users)).toEqual(ids(byEmailDesc.slice(MIDDLE, MIDDLE + 100)));

    const users = all.filter((u) => u.role === "user");
    const filtered = await anchoredPage({ filterField: "role", filterValue: "user", limit: 100, offset: 52_222 });
    expect(filtered.total).toBe(users.length);
    expect(ids(filtered.users)).toEqual(ids(users.slice(52_222, 52_222 + 100)));
  });

  it("an anchor whose user is gone is not followed: the page is read by offset, exactly", async () => {
    const offset = 6 * STRIDE + 17;
    await anchoredPage({ limit: 100, offset });
    // The anchor of position 60,000 (every list above shares the default order's anchors).
    const gone = all[6 * STRIDE]!;
    const removed = await adminPost(server, "remove-user", { userId: gone.id }, admin.token);
    expect(removed.status, removed.text).toBe(200);
    all = all.filter((u) => u.id !== gone.id);
    const after = await capture(() => list({ limit: 100, offset }));
    expect(ids(after.result.users)).toEqual(ids(all.slice(offset, offset + 100)));
    // Rebuilt without the removed user, anchors serve the list as it is now.
    server.clock.advance(MAX_AGE_MS + SECOND);
    const rebuilt = await anchoredPage({ limit: 100, offset });
    expect(rebuilt.total).toBe(all.length);
    expect(ids(rebuilt.users)).toEqual(ids(all.slice(offset, offset + 100)));
  });
});
