import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Member, Organization, User } from "../../../src/db/entities/index.ts";
import { MEMBERSHIP_LOOKUP } from "../../../src/db/session-store/index.ts";
import { FRESH_MS, MAX_AGE_MS } from "../../../src/core/index.ts";
import { bootstrapAdmin, captureSql, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * list-members and the membership check on a large organization (docs/organizations.md
 * "Listing members"): exact pages and totals on both dialects, and on PostgreSQL (ANALYZEd,
 * planner left alone) the plans: each page an index walk of the organization's entries, the
 * membership check one lookup on the unique (organization_id, user_id) index.
 */
const N = 20_000;
const SMALL = 40;
let server: TestServer;
let owner: SignedInUser;
let orgId: string;

beforeAll(async () => {
  server = await startTestServer({ organization: { membershipLimit: N + 10 } });
  owner = await signUp(server);
  const created = await post(`${server.auth}/organization/create`, { name: "Big", slug: `big-${Date.now().toString(36)}` }, { bearer: owner.token });
  expect(created.status, created.text).toBe(200);
  orgId = created.body.id;
  const em = server.portcullis.app.orm.em.fork();
  const base = server.clock.now().getTime();
  const users = Array.from({ length: N }, (_, i) => ({ id: randomUUID(), email: `member${i}@scale.test`, name: `Member ${i}`, createdAt: new Date(base), updatedAt: new Date(base) }));
  for (let i = 0; i < users.length; i += 1000) await em.insertMany(User, users.slice(i, i + 1000));
  const members = users.map((u, i) => ({ id: randomUUID(), organization: orgId, user: u.id, role: i % 50 === 0 ? "admin" : "member", createdAt: new Date(base + (i + 1) * SECOND) }));
  for (let i = 0; i < members.length; i += 1000) await em.insertMany(Member, members.slice(i, i + 1000));
  // Other organizations, so the big one is not the whole table.
  for (let o = 0; o < SMALL; o++) {
    const id = randomUUID();
    await em.insert(Organization, { id, name: `Small ${o}`, slug: `small-${o}-${id}`, createdAt: new Date(base) });
    await em.insertMany(Member, users.slice(o * 100, o * 100 + 100).map((u) => ({ id: randomUUID(), organization: id, user: u.id, role: "member", createdAt: new Date(base) })));
  }
  await em.getConnection().execute(testDialect === "postgres" ? "analyze members; analyze users; analyze organizations" : "analyze");
  // SQLite's seeding holds this process's event loop for seconds: the server's keep-alive timer
  // (5 s) ends the client's pooled connection as the loop frees; let the client see that close
  // before the next request, or that request is written into the closing socket (ECONNRESET).
  await new Promise((resolve) => setTimeout(resolve, 100));
}, 180_000);
afterAll(async () => {
  await server?.close();
});

const page = (query: Record<string, string>) => get(`${server.auth}/organization/list-members?${new URLSearchParams({ organizationId: orgId, ...query })}`, { bearer: owner.token });

describe(`list-members on a ${N.toLocaleString("en")}-member organization (${testDialect})`, () => {
  it("pages in order with the exact total, deep offsets too; filters count exactly", async () => {
    const first = await page({ limit: "100" });
    expect(first.status, first.text).toBe(200);
    expect(first.body.total).toBe(N + 1);
    expect(first.body.members[0].userId).toBe(owner.id);
    const deep = await page({ limit: "100", offset: String(N - 50) });
    expect(deep.body.members).toHaveLength(51);
    expect(deep.body.members.at(-1).user.email).toBe(`member${N - 1}@scale.test`);
    const admins = await page({ filterField: "role", filterValue: "admin", limit: "1000" });
    expect(admins.body.total).toBe(N / 50);
    const byRoleDesc = await page({ sortBy: "role", sortDirection: "desc", limit: "1" });
    expect(byRoleDesc.body.members[0].role).toBe("owner");
  });

  it("a deep page is read from the nearer end once the total is known, with the same members in the same order", async () => {
    const queries: Record<string, string>[] = [{ filterField: "role", filterOperator: "ne", filterValue: "owner" }, { sortBy: "role", sortDirection: "desc", filterField: "role", filterOperator: "ne", filterValue: "nobody" }];
    for (const query of queries) {
      const deep = { ...query, limit: "100", offset: String(N - 150) };
      const forwards = await captureSql(server, () => page(deep)); // the total not yet counted for this filter: read forwards
      const backwards = await captureSql(server, () => page(deep));
      expect(backwards.result.status, backwards.result.text).toBe(200);
      expect(backwards.result.body.members).toHaveLength(100);
      expect(backwards.result.body.members).toEqual(forwards.result.body.members);
      const pageRead = (statements: string[]) => statements.find((q) => /^select .* from .?members.? as .?m0.? .*order by/i.test(q) && !/count\(/.test(q))!;
      expect(pageRead(forwards.statements), forwards.statements.join("\n")).toMatch(/offset/i);
      expect(pageRead(backwards.statements)).not.toEqual(pageRead(forwards.statements)); // the other direction, a small offset
    }
  });

  it("counts a large total once per filter; adding, re-roling or removing a member recounts it at once; stale totals are recounted", async () => {
    const counts = (statements: string[]) => statements.filter((s) => /^select count\(\*\)/.test(s)).length;
    const total = async (query: Record<string, string> = {}) => {
      const res = await page({ limit: "10", ...query });
      expect(res.status, res.text).toBe(200);
      return res.body.total as number;
    };
    const first = await captureSql(server, () => total());
    expect(first.result).toBe(N + 1);
    const later = await captureSql(server, async () => [await total({ offset: "10" }), await total({ offset: "15000", sortBy: "role" }), await total()]);
    expect(later.result).toEqual([N + 1, N + 1, N + 1]);
    // Pages only: the membership is the prepared lookup, the total the cached one.
    expect(counts(later.statements), later.statements.join("\n")).toBe(0);
    expect(later.statements.every((s) => !/count\(/.test(s)), later.statements.join("\n")).toBe(true);

    const admins = N / 50;
    expect(await total({ filterField: "role", filterValue: "admin" })).toBe(admins);
    const late = await signUp(server);
    const added = await post(`${server.auth}/organization/add-member`, { userId: late.id, organizationId: orgId, role: "admin" }, { bearer: (await bootstrapAdmin(server)).token });
    expect(added.status, added.text).toBe(200);
    expect(await total()).toBe(N + 2);
    expect(await total({ filterField: "role", filterValue: "admin" })).toBe(admins + 1);
    const reroled = await post(`${server.auth}/organization/update-member-role`, { organizationId: orgId, memberId: added.body.id, role: "member" }, { bearer: owner.token });
    expect(reroled.status, reroled.text).toBe(200);
    expect(await total({ filterField: "role", filterValue: "admin" })).toBe(admins);
    const removed = await post(`${server.auth}/organization/remove-member`, { organizationId: orgId, memberIdOrEmail: added.body.id }, { bearer: owner.token });
    expect(removed.status, removed.text).toBe(200);
    expect(await total()).toBe(N + 1);

    // A change this instance did not see (another instance's, here a direct write) shows once the total is stale.
    const em = server.portcullis.app.orm.em.fork();
    const outside = { id: randomUUID(), organization: orgId, user: late.id, role: "member", createdAt: server.clock.now() };
    await em.insert(Member, outside);
    expect(await total()).toBe(N + 1);
    server.clock.advance(FRESH_MS + SECOND);
    await expect.poll(() => total()).toBe(N + 2);
    await em.nativeDelete(Member, { id: outside.id });
    server.clock.advance(MAX_AGE_MS + SECOND);
    expect(await total()).toBe(N + 1);
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

describe.runIf(testDialect === "postgres")("list-members and has-permission plans on PostgreSQL (ANALYZEd, planner left alone)", () => {
  async function plan(sql: string): Promise<PlanNode[]> {
    const rows = await server.portcullis.app.orm.em.getConnection().execute<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(`explain (analyze, format json) ${sql}`);
    return nodesOf(rows[0]!["QUERY PLAN"][0].Plan);
  }
  const noSeqScan = (nodes: PlanNode[]) => expect(nodes.filter((n) => n["Relation Name"] === "members" && n["Node Type"] === "Seq Scan"), JSON.stringify(nodes)).toEqual([]);
  const usesIndex = (nodes: PlanNode[], index: string) => expect(nodes.some((n) => n["Index Name"] === index), JSON.stringify(nodes)).toBe(true);

  it("a page walks members_organization_created_at_id_index (or the role index), the membership check is one index lookup", async () => {
    const { statements } = await captureSql(server, () => page({ limit: "100", offset: "5000" }));
    const fromMembers = /from "?members"?/;
    // The caller's membership is the session store's prepared lookup (MEMBERSHIP_LOOKUP), not an ORM statement.
    expect(statements.filter((s) => fromMembers.test(s) && /"?user_id"? = '/.test(s) && s.includes(owner.id)), statements.join("\n")).toEqual([]);
    const membership = `${MEMBERSHIP_LOOKUP}'${orgId}' AND user_id = '${owner.id}'`;
    const pageSql = statements.find((s) => s.includes(`from "members"`) && s.includes("limit 100"));
    expect(pageSql, statements.join("\n")).toBeDefined();
    // One index lookup: the unique (organization_id, user_id) index, or the user's (a user belongs to few organizations).
    const m = await plan(membership);
    noSeqScan(m);
    expect(m.some((n) => ["members_organization_user_unique", "members_user_id_index"].includes(n["Index Name"] ?? "")), JSON.stringify(m)).toBe(true);
    const p = await plan(pageSql!);
    noSeqScan(p);
    usesIndex(p, "members_organization_created_at_id_index");
    const byRole = await captureSql(server, () => page({ limit: "100", sortBy: "role" }));
    const roleSql = byRole.statements.find((s) => s.includes(`from "members"`) && s.includes("limit 100"))!;
    noSeqScan(await plan(roleSql));

    // has-permission reads the membership by the session store's prepared statement, outside the ORM: none of its statements.
    const perm = await captureSql(server, () => post(`${server.auth}/organization/has-permission`, { organizationId: orgId, permissions: { member: ["create"] } }, { bearer: owner.token }));
    expect(perm.result.body, perm.result.text).toEqual({ error: null, success: true });
    expect(perm.statements.filter((s) => fromMembers.test(s)), perm.statements.join("\n")).toEqual([]);
    const p2 = await plan(`${MEMBERSHIP_LOOKUP}'${orgId}' AND user_id = '${owner.id}'`);
    noSeqScan(p2);
    expect(p2.some((n) => ["members_organization_user_unique", "members_user_id_index"].includes(n["Index Name"] ?? "")), JSON.stringify(p2)).toBe(true);
  });
});
