/**
 * An impersonation never creates lasting access, even when the impersonated user is an admin
 * (a role with `impersonate-admins` may start one): every admin route whose permission also
 * asks for lasting access (the router's meta `lasting: true`: client secrets, API keys for
 * someone else...) answers 403 IMPERSONATION_NOT_ALLOWED to it and leaves nothing behind, while
 * the admin's own session may. The list comes from the router, so a route added later is covered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { appRouter } from "../../../src/trpc/app-router.ts";
import type { ProcedureMeta } from "../../../src/trpc/init.ts";
import { ApiKey, OauthClient } from "../../../src/db/entities/index.ts";
import { testDialect } from "../../harness/database.ts";
import { post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

let server: TestServer;
let superadmin: SignedInUser;
let otherAdmin: SignedInUser;

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } }>;
const lastingAdminRoutes = routes.filter((r) => r.path.startsWith("/admin/") && procedures[r.procedure]?._def.meta?.lasting === true);

beforeAll(async () => {
  server = await startTestServer({
    admin: {
      roles: { superadmin: { user: ["list", "get", "impersonate", "impersonate-admins"], session: ["list", "revoke"] } },
      adminRoles: ["admin", "superadmin"],
    },
  });
  const admin = await bootstrapAdmin(server);
  superadmin = await signUp(server);
  otherAdmin = await signUp(server);
  expect((await adminPost(server, "set-role", { userId: superadmin.id, role: "superadmin" }, admin.token)).status).toBe(200);
  expect((await adminPost(server, "set-role", { userId: otherAdmin.id, role: "admin" }, admin.token)).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
});

const count = async () => {
  const em = server.portcullis.app.orm.em.fork();
  return { clients: await em.count(OauthClient, {}), keys: await em.count(ApiKey, {}) };
};

describe(`admin routes that create lasting access, as an impersonated admin (${testDialect})`, () => {
  it("the router marks the ones expected (client secrets, API keys for others)", () => {
    expect(lastingAdminRoutes.map((r) => r.path)).toEqual(expect.arrayContaining(["/admin/oauth2/create-client", "/admin/oauth2/client/rotate-secret", "/admin/create-api-key"]));
  });

  it("each answers 403 IMPERSONATION_NOT_ALLOWED and writes nothing; the admin's own session passes that guard", async () => {
    const started = await post(`${server.auth}/admin/impersonate-user`, { userId: otherAdmin.id }, { bearer: superadmin.token });
    expect(started.status, started.text).toBe(200);
    const impersonation = started.body.session.token as string;
    const before = await count();
    const body = { userId: otherAdmin.id, client_id: "x", client_name: "n", redirect_uris: ["https://rp.example.test/cb"] };
    for (const route of lastingAdminRoutes) {
      const res = await request(route.method, `${server.auth}${route.path}`, { json: body, bearer: impersonation });
      expect(res.status, `${route.path}: ${res.text}`).toBe(403);
      expect(res.body.code, route.path).toBe("IMPERSONATION_NOT_ALLOWED");
    }
    expect(await count()).toEqual(before);
    // The same admin signed in as themselves gets past that guard (to the route's own answer).
    for (const route of lastingAdminRoutes) {
      const own = await request(route.method, `${server.auth}${route.path}`, { json: body, bearer: otherAdmin.token });
      expect(own.body?.code, `${route.path} (own session): ${own.text}`).not.toBe("IMPERSONATION_NOT_ALLOWED");
    }
  });
});
