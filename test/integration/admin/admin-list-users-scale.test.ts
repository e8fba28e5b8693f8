import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { FRESH_MS, MAX_AGE_MS } from "../../../src/modules/admin/list-users.totals.ts";
import { DAY, SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, captureSql, idsOf, listUsersPage, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Admin list-users over 20,000 users: deep offsets, the nearer-end read,
 * the total counted once per filter, and (per dialect) the plans of the statements it issues.
 * The answers are compared with the same list sorted here, in memory.
 */

interface Row {
  id: string;
  email: string;
  name: string;
  role: string;
  createdAt: string;
}

const N = 20_000;
const pad = (i: number, n: number) => String(i).padStart(n, "0");

let server: TestServer;
let admin: SignedInUser;
/** Every user in the database, in the default order (createdAt, id): the seeded ones, then the admin. */
const all: Row[] = [];

/** The SQL statements run while `fn` runs, with their parameters inlined. */
const capture = <T>(fn: () => Promise<T>) => captureSql(server, fn);

beforeAll(async () => {
  server = await startTestServer();
  const em = server.portcullis.app.orm.em.fork();
  const base = server.clock.now().getTime() - 30 * DAY;
  const rows = Array.from({ length: N }, (_, i) => {
    const at = new Date(base + i * SECOND);
    return {
      id: randomUUID(),
      email: `person${pad(i, 5)}@${i % 2 ? "example.com" : "mail.test"}`,
      // 40 users share each name: sorting by name needs the id tie-break.
      name: `Person ${pad(i % 500, 3)}`,
      role: i % 7 === 0 ? "support" : "user",
      emailVerified: i % 3 === 0,
      createdAt: at,
      updatedAt: at,
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await em.insertMany(User, rows.slice(i, i + 1000));
  all.push(...rows.map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role, createdAt: r.createdAt.toISOString() })));
  admin = await bootstrapAdmin(server, "root@scale.test");
  all.push({ id: admin.id, email: admin.email, name: admin.user.name, role: "admin", createdAt: admin.user.createdAt });
  // What autovacuum's analyze does after a bulk load: the planner gets the table's statistics.
  await em.getConnection().execute(testDialect === "postgres" ? "analyze users" : "analyze");
}, 120_000);
afterAll(async () => {
  await server?.close();
});

type Query = Record<string, string | number>;
const list = (query: Query) => listUsersPage<Row>(server, admin.token, query);
const ids = idsOf;
const byNameDescIdDesc = (a: Row, b: Row) => (a.name === b.name ? (a.id < b.id ? 1 : -1) : a.name < b.name ? 1 : -1);

describe(`list-users over ${N.toLocaleString("en")} users (${testDialect})`, () => {
  it("answers deep offsets, the last partial page and offsets past the end exactly, with the exact total", async () => {
    const total = all.length;
    for (const offset of [0, 100, 10_000, 13_337, total - 150, total - 37]) {
      const page = await list({ limit: 100, offset });
      expect(page.total).toBe(total);
      expect(page.offset).toBe(offset);
      expect(ids(page.users), `offset ${offset}`).toEqual(ids(all.slice(offset, offset + 100)));
    }
    expect((await list({ limit: 100, offset: total })).users).toEqual([]);
    expect((await list({ limit: 100, offset: total + 5000 })).users).toEqual([]);
    expect((await list({ limit: 1, offset: total - 1 })).users[0]!.id).toBe(admin.id);
  });

  it("sorts deep pages by a column with ties, ties broken by id in the sort's direction; descending is ascending reversed", async () => {
    const expected = [...all].sort(byNameDescIdDesc);
    for (const offset of [0, 5_000, 19_000]) {
      const page = await list({ sortBy: "name", sortDirection: "desc", limit: 250, offset });
      expect(ids(page.users), `offset ${offset}`).toEqual(ids(expected.slice(offset, offset + 250)));
    }
    const filter = { filterField: "name", filterValue: "Person 042" };
    const asc = await list({ ...filter, sortBy: "role", sortDirection: "asc", limit: 1000 });
    const desc = await list({ ...filter, sortBy: "role", sortDirection: "desc", limit: 1000 });
    expect(asc.total).toBe(40);
    expect(ids(desc.users)).toEqual(ids(asc.users).reverse());
  });

  it("pages a contains-search from both ends, with its exact total", async () => {
    const matching = all.filter((u) => u.email.includes("example"));
    for (const offset of [0, 4_321, matching.length - 60]) {
      const page = await list({ searchValue: "EXAMPLE", limit: 100, offset });
      expect(page.total).toBe(matching.length);
      expect(ids(page.users), `offset ${offset}`).toEqual(ids(matching.slice(offset, offset + 100)));
    }
    const one = await list({ searchValue: "son01234@" });
    expect(ids(one.users)).toEqual([all[1234]!.id]);
    expect(one.total).toBe(1);
    // More matches than a total counted on every page: read as other lists are, counted beside.
    const many = await list({ searchValue: "PERSON", limit: 100, offset: 12_345 });
    expect(many.total).toBe(N);
    expect(ids(many.users)).toEqual(ids(all.filter((u) => u.email.includes("person")).slice(12_345, 12_445)));
    // Past the last match: no row carries the total, which is still exact.
    const past = await list({ searchValue: "son01234@", offset: 5 });
    expect(past.users).toEqual([]);
    expect(past.total).toBe(1);
  });

  it("sorts and pages a search with a filter beside it, ties broken by id in the sort's direction", async () => {
    // Names "Person 04x": 10 names of 40 users each; the support role keeps every 7th.
    const matching = all.filter((u) => u.name.toLowerCase().includes("son 04") && u.role === "support").sort(byNameDescIdDesc);
    expect(matching.length).toBeGreaterThan(40);
    const query = { searchField: "name", searchOperator: "contains", searchValue: "SON 04", filterField: "role", filterValue: "support", sortBy: "name", sortDirection: "desc", limit: 25 };
    for (const offset of [0, 25, matching.length - 10]) {
      const page = await list({ ...query, offset });
      expect(page.total).toBe(matching.length);
      expect(ids(page.users), `offset ${offset}`).toEqual(ids(matching.slice(offset, offset + 25)));
    }
  });

  it("counts a large total once per filter, reuses it for a few seconds, and recounts after", async () => {
    const filter = { filterField: "emailVerified", filterValue: "false" };
    const unverified = N - Math.ceil(N / 3); // every third seeded user is verified, and so is the admin
    const counts = (statements: string[]) => statements.filter((s) => /^select count\(\*\)/.test(s)).length;
    const first = await capture(() => list({ ...filter, limit: 10 }));
    expect(first.result.total).toBe(unverified);
    expect(counts(first.statements)).toBe(1);
    const later = await capture(async () => [await list({ ...filter, limit: 10, offset: 10 }), await list({ ...filter, limit: 10, offset: 5000 })]);
    expect(counts(later.statements)).toBe(0);
    expect(later.result.map((p) => p.total)).toEqual([unverified, unverified]);

    // A new user: the cached total is kept while fresh...
    const created = await adminPost(server, "create-user", { email: "late@scale.test", name: "Late" }, admin.token);
    expect(created.status, created.text).toBe(200);
    expect((await list({ ...filter, limit: 1 })).total).toBe(unverified);
    // ...served once more when stale while it is recounted in the background...
    server.clock.advance(FRESH_MS + SECOND);
    const stale = await capture(() => list({ ...filter, limit: 1 }));
    expect(stale.result.total).toBe(unverified);
    await expect.poll(async () => (await list({ ...filter, limit: 1 })).total).toBe(unverified + 1);
    // ...and past its maximum age it is counted again before answering.
    await adminPost(server, "remove-user", { userId: created.body.user.id }, admin.token);
    server.clock.advance(MAX_AGE_MS + SECOND);
    expect((await list({ ...filter, limit: 1 })).total).toBe(unverified);
  });
});

/** The plan nodes of an EXPLAIN (FORMAT JSON) answer, flattened. */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.runIf(testDialect === "postgres")("list-users plans on PostgreSQL (ANALYZEd, planner left alone)", () => {
  async function plan(sql: string): Promise<PlanNode[]> {
    const rows = await server.portcullis.app.orm.em.getConnection().execute<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(`explain (analyze, format json) ${sql}`);
    return nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
  }
  /** The statements of one list-users call that read users: the page's ids, and the count when it runs. */
  async function statementsOf(query: Query) {
    const { statements } = await capture(() => list(query));
    const idQuery = statements.find((s) => s.startsWith(`select "u"."id" from "users"`));
    expect(idQuery, statements.join("\n")).toBeDefined();
    return { idQuery: idQuery!, count: statements.find((s) => s.startsWith("select count(*)")) };
  }
  function expectIndex(nodes: PlanNode[], index: string, types: string[]) {
    expect(nodes.filter((n) => n["Relation Name"] === "users" && n["Node Type"] === "Seq Scan"), JSON.stringify(nodes)).toEqual([]);
    expect(nodes.some((n) => n["Index Name"] === index && types.includes(n["Node Type"])), JSON.stringify(nodes)).toBe(true);
  }

  it("the first page and a deep page walk users_created_at_id_index; sorting by name walks users_name_id_index", async () => {
    const first = await statementsOf({ limit: 100 });
    expectIndex(await plan(first.idQuery), "users_created_at_id_index", ["Index Only Scan"]);
    const deep = await statementsOf({ limit: 100, offset: 14_000 });
    expect(deep.count).toBeUndefined(); // the total of this filter was counted on the first page
    expect(deep.idQuery).toMatch(/order by "u"."created_at" desc, "u"."id" desc limit 100 offset 5901$/); // read from the nearer end
    expectIndex(await plan(deep.idQuery), "users_created_at_id_index", ["Index Only Scan", "Index Only Scan Backward"]);
    const byName = await statementsOf({ sortBy: "name", sortDirection: "desc", limit: 50 });
    expectIndex(await plan(byName.idQuery), "users_name_id_index", ["Index Only Scan", "Index Only Scan Backward", "Index Scan Backward"]);
  });

  it("a contains-search finds its matches by the trigram index, page and total in one statement", async () => {
    for (const [query, index] of [
      [{ searchValue: "son01234@", limit: 100 }, "users_email_search_index"],
      [{ searchField: "name", searchValue: "son 04", searchOperator: "contains", sortBy: "email" }, "users_name_search_index"],
    ] as const) {
      const { statements } = await capture(() => list(query));
      const reads = statements.filter((s) => !/from "sessions"/.test(s));
      expect(reads.filter((s) => s.startsWith("select count(*)")), reads.join("\n")).toEqual([]);
      const search = reads.find((s) => s.startsWith(`with "m" as materialized (select`));
      expect(search, reads.join("\n")).toBeDefined();
      expectIndex(await plan(search!), index, ["Bitmap Index Scan"]);
    }
    // A search matching more users than that is counted beside a walk of the order's index.
    const { statements } = await capture(() => list({ searchValue: "person", limit: 100, offset: 10 }));
    expect(statements.filter((s) => s.startsWith("select count(*)")), statements.join("\n")).toHaveLength(1);
    expect(statements.some((s) => s.startsWith(`select "u"."id" from "users"`)), statements.join("\n")).toBe(true);
  });
});

describe.runIf(testDialect === "sqlite")("list-users plans on SQLite", () => {
  async function queryPlan(sql: string): Promise<string[]> {
    const rows = await server.portcullis.app.orm.em.getConnection().execute<{ detail: string }[]>(`explain query plan ${sql}`);
    return rows.map((r: { detail: string }) => r.detail);
  }
  async function statementsOf(query: Query) {
    const { statements } = await capture(() => list(query));
    return statements.filter((s) => /^select (`u`.`id`|count)/.test(s));
  }

  it("the default order, a deep page and each sort read their (column, id) index without a sort step", async () => {
    const cases: [Query, string][] = [
      [{ limit: 100 }, "users_created_at_id_index"],
      [{ limit: 100, offset: 12_000 }, "users_created_at_id_index"],
      [{ sortBy: "name", sortDirection: "desc", limit: 100 }, "users_name_id_index"],
      [{ sortBy: "updatedAt", limit: 100 }, "users_updated_at_id_index"],
      [{ sortBy: "role", sortDirection: "desc", limit: 100 }, "users_role_id_index"],
    ];
    for (const [query, index] of cases) {
      const [idQuery] = await statementsOf(query);
      const plan = await queryPlan(idQuery!);
      expect(plan.join(" | "), JSON.stringify(query)).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
      expect(plan.join(" | ")).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("a search counts from the narrow lower(email) index", async () => {
    const statements = await statementsOf({ searchValue: "son0123" });
    const count = statements.find((s) => s.startsWith("select count"));
    expect((await queryPlan(count!)).join(" | ")).toMatch(/USING COVERING INDEX users_email_search_index/);
  });
});
