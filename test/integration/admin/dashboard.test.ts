import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { dashboardQueries } from "../../../src/db/dashboard.ts";
import { adminPost, bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The console's dashboard figures (admin.dashboard, src/db/dashboard.ts; docs/admin-console.md
 * "Dashboard"): sign-ups, sign-ins and failed sign-ins per day over 30 days, active sessions, the
 * two-factor and passkey share, recent admin actions, top failure reasons; one aggregate query
 * per figure, each on an index (its plan read with EXPLAIN; PostgreSQL with sequential scans
 * discouraged, as on a table large enough to matter).
 */

let server: TestServer;
let admin: SignedInUser;
let users: SignedInUser[];

const dashboard = (token: string) => get(`${server.url}/api/trpc/admin.dashboard`, { bearer: token });

beforeAll(async () => {
  server = await startTestServer();
  admin = await bootstrapAdmin(server);
  users = [await signUp(server), await signUp(server), await signUp(server)];
  for (const u of users) expect((await post(`${server.auth}/sign-in/email`, { email: u.email, password: PASSWORD })).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await post(`${server.auth}/sign-in/email`, { email: users[0]!.email, password: `wrong-${i}-password` })).status).toBe(401);
  expect((await adminPost(server, "ban-user", { userId: users[2]!.id }, admin.token)).status).toBe(200);
  expect((await post(`${server.auth}/sign-in/email`, { email: users[2]!.email, password: PASSWORD })).status).toBe(403);
  await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: users[1]!.id }, { twoFactorEnabled: true });
});
afterAll(() => server?.close());

describe(`admin dashboard (${testDialect})`, () => {
  it("counts today's sign-ups, sign-ins and failures, the sessions, the two-factor share, admin actions and failure reasons", async () => {
    const res = await dashboard(admin.token);
    expect(res.status, res.text).toBe(200);
    const d = res.body.result.data;
    expect(d.days).toHaveLength(30);
    const today = d.days.at(-1);
    expect(today.day).toBe(Math.floor(server.clock.now().getTime() / 86_400_000));
    expect(today).toMatchObject({ signUps: 4, signIns: 4, failedSignIns: 4 }); // the admin and 3 users; their sign-ins; 3 wrong passwords and a ban
    expect(d.days.slice(0, -1).every((x: { signUps: number }) => x.signUps === 0)).toBe(true);
    expect(d).toMatchObject({ users: 4, twoFactorUsers: 1, passkeyUsers: 0 });
    expect(d.activeSessions).toBe(5); // the admin's sign-in, 3 sign-ups and 3 sign-ins, less the banned user's 2 (the ban ended them)
    expect(d.recentAdminActions.map((a: { action: string }) => a.action)).toEqual(["ban-user", "create-admin"]);
    expect(d.topFailureReasons).toEqual([
      { reason: "INVALID_EMAIL_OR_PASSWORD", count: 3 },
      { reason: "BANNED_USER", count: 1 },
    ]);
  });

  it("is the audit readers': a plain user gets 403", async () => {
    const res = await dashboard(users[0]!.token);
    expect(res.status).toBe(403);
  });

  it("each figure is one query on an index (EXPLAIN)", async () => {
    const conn = server.portcullis.app.orm.em.fork().getConnection();
    const queries = Object.entries(dashboardQueries(server.portcullis.app.dialect));
    expect(queries.length).toBe(9);
    const param = testDialect === "sqlite" ? Date.now() : new Date().toISOString();
    for (const [name, sql] of queries) {
      const params = sql.includes("?") ? [param] : [];
      if (testDialect === "sqlite") {
        const rows = (await conn.execute(`explain query plan ${sql}`, params, "all")) as { detail: string }[];
        const plan = rows.map((r) => r.detail);
        const scans = plan.filter((d) => /^(SCAN|SEARCH) /.test(d));
        expect(scans.length, `${name}: ${plan.join(" | ")}`).toBeGreaterThan(0);
        for (const d of scans) expect(d, `${name}: ${plan.join(" | ")}`).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/);
      } else {
        await conn.execute("set enable_seqscan = off");
        try {
          const rows = (await conn.execute(`explain ${sql}`, params, "all")) as Record<string, string>[];
          const plan = rows.map((r) => Object.values(r)[0]!);
          expect(plan.join("\n"), name).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
          expect(plan.join("\n"), name).not.toMatch(/Seq Scan/);
        } finally {
          await conn.execute("set enable_seqscan = on");
        }
      }
    }
  });
});
