import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../../src/openapi/index.ts";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { routes } from "../../../rest-bridge/routes.ts";
import { SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { dereferenced, exampleOf, schemaValidator, type Json } from "./openapi-helpers.ts";
import { createClient } from "../../../src/modules/oidc-provider/clients.ts";
import { recordConsent } from "../../../src/modules/oidc-provider/consent.ts";
import { OauthConsent } from "../../../src/db/entities/index.ts";

/**
 * The generated document is valid OpenAPI 3.1, has exactly the routes of the table,
 * and describes what the server does: one request per route, built from the document, is
 * accepted (never 400 VALIDATION_ERROR, never 404), answers a status the document lists, and its
 * body validates against the documented schema (answers and errors alike).
 */

let server: TestServer;
let doc: OpenApiDocument;
let api: Json;
let admin: SignedInUser;
const check = schemaValidator();

beforeAll(async () => {
  server = await startTestServer({
    user: { deleteUser: { enabled: true }, changeEmail: { enabled: true } },
    organization: { teams: { enabled: true }, dynamicAccessControl: { enabled: true } },
    providers: {
      example: {
        type: "oauth2",
        clientId: "openapi-client",
        clientSecret: "openapi-secret",
        // Never contacted: starting a flow only builds the URL.
        authUrl: "http://127.0.0.1:9/authorize",
        tokenUrl: "http://127.0.0.1:9/token",
        userInfoUrl: "http://127.0.0.1:9/userinfo",
        scopes: ["openid", "email"],
        mapUserInfo: (raw) => ({ id: String(raw.sub), email: String(raw.email) }),
      },
    },
  });
  const res = await get(`${server.auth}/openapi.json`);
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  doc = res.body;
  api = await dereferenced(doc);
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const docPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");
let seq = 0;
const freshUser = () => signUp(server, { username: `oa_${process.pid}_${++seq}` });
const usernameOf = (u: SignedInUser) => u.user.username as string;

describe(`the OpenAPI document (${testDialect})`, () => {
  it("is valid OpenAPI 3.1 (@readme/openapi-parser), for this server and its cookie", async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "http://127.0.0.1:3000/api/auth" }]);
    expect(doc.components.securitySchemes).toMatchObject({
      sessionCookie: { type: "apiKey", in: "cookie", name: "portcullis.session_token" },
      bearerAuth: { type: "http", scheme: "bearer" },
    });
  });

  it("has every route of rest-bridge/routes.ts and nothing else", () => {
    const inTable = routes.map((r) => key(r.method, docPath(r.path))).sort();
    const inDoc = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => key(m, path))).sort();
    expect(inDoc).toEqual(inTable);
    expect(new Set(inTable).size).toBe(routes.length);
  });
});

/** What a route's example request is sent with: a session, values by field name, extra fields. */
interface Setup {
  bearer?: string;
  known?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

async function deviceCode(): Promise<{ device_code: string; user_code: string }> {
  const res = await post(`${server.auth}/device/code`, { client_id: "openapi-cli" });
  expect(res.status, res.text).toBe(200);
  return res.body;
}
async function claimed(user: SignedInUser) {
  const code = await deviceCode();
  expect((await get(`${server.auth}/device?user_code=${code.user_code}`, { bearer: user.token })).status).toBe(200);
  return code;
}
async function enrolled(user: SignedInUser) {
  const res = await post(`${server.auth}/two-factor/enable`, { password: PASSWORD }, { bearer: user.token });
  expect(res.status, res.text).toBe(200);
  const secret = new URL(res.body.totpURI).searchParams.get("secret")!;
  server.clock.advance(30 * SECOND); // a TOTP step not used yet
  return { secret, backupCodes: res.body.backupCodes as string[], code: () => totpCode(secret, server.clock.now().getTime()) };
}

async function apiKeyOf(user: SignedInUser): Promise<{ id: string; key: string }> {
  const res = await post(`${server.auth}/api-key/create`, {}, { bearer: user.token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** An OpenID provider client (owned by `userId`), registered through the service. */
async function oauthClient(userId: string | null, authMethod: "none" | "client_secret_basic" = "none"): Promise<string> {
  const app = server.portcullis.app;
  const { client } = await createClient(app, app.orm.em.fork(), { name: "OpenAPI RP", redirectUris: ["https://rp.example.test/cb"], grantTypes: ["authorization_code"], authMethod, userId });
  return client.clientId;
}

/** A consent of `userId` to a new client; its id. */
async function oauthConsent(userId: string): Promise<string> {
  const app = server.portcullis.app;
  const em = app.orm.em.fork();
  const clientId = await oauthClient(null);
  await recordConsent(app, em, userId, clientId, ["openid"]);
  return (await em.findOneOrFail(OauthConsent, { clientId })).id;
}

/** An organization `owner` creates (it becomes their session's active one), optionally with `member` added by the admin. */
async function organizationOf(owner: SignedInUser, member?: SignedInUser, role = "member") {
  const res = await post(`${server.auth}/organization/create`, { name: "OpenAPI org", slug: `oa-org-${process.pid}-${++seq}` }, { bearer: owner.token });
  expect(res.status, res.text).toBe(200);
  let memberId: string | undefined;
  if (member) {
    const added = await post(`${server.auth}/organization/add-member`, { userId: member.id, organizationId: res.body.id, role }, { bearer: admin.token });
    expect(added.status, added.text).toBe(200);
    memberId = added.body.id;
  }
  return { id: res.body.id as string, memberId };
}

/** An invitation into a fresh organization for `u`, whose address the admin marks verified (the recipient's rule). */
async function invitationFor(u: SignedInUser) {
  expect((await post(`${server.auth}/admin/update-user`, { userId: u.id, data: { emailVerified: true } }, { bearer: admin.token })).status).toBe(200);
  const owner = await freshUser();
  const org = await organizationOf(owner);
  const res = await post(`${server.auth}/organization/invite-member`, { email: u.email, role: "member", organizationId: org.id }, { bearer: owner.token });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

/** The default team of a fresh organization of `u` (teams on: the creator is in it, and it is the session's active team). */
async function teamOf(u: SignedInUser) {
  await organizationOf(u);
  const teams = await get(`${server.auth}/organization/list-teams`, { bearer: u.token });
  return { teamId: teams.body[0].id as string };
}

/** A dynamic role of a fresh organization of `u`. */
async function roleOf(u: SignedInUser) {
  await organizationOf(u);
  const name = `oa_role_${++seq}`;
  const res = await post(`${server.auth}/organization/create-role`, { role: name, permission: { member: ["create"] } }, { bearer: u.token });
  expect(res.status, res.text).toBe(200);
  return name;
}

/** Routes whose example needs something first; every other route gets a fresh user's session (or none when public). */
const SETUPS: Record<string, (user: SignedInUser) => Promise<Setup>> = {
  "POST /sign-up/email": async () => ({ known: { email: uniqueEmail("openapi-new"), username: `oa_new_${process.pid}_${++seq}` } }),
  "POST /is-username-available": async () => ({ known: { username: `oa_free_${process.pid}_${++seq}` } }),
  "POST /update-user": async (u) => ({ bearer: u.token, extra: { name: "Renamed" } }),
  "POST /change-email": async (u) => ({ bearer: u.token, known: { newEmail: uniqueEmail("openapi-moved") } }),
  "POST /revoke-session": async (u) => ({ bearer: u.token, known: { token: u.token } }),
  "GET /device": async (u) => ({ bearer: u.token, known: { user_code: (await deviceCode()).user_code } }),
  "POST /device/approve": async (u) => ({ bearer: u.token, known: { userCode: (await claimed(u)).user_code } }),
  "POST /device/deny": async (u) => ({ bearer: u.token, known: { userCode: (await claimed(u)).user_code } }),
  "POST /device/token": async (u) => {
    const code = await claimed(u);
    expect((await post(`${server.auth}/device/approve`, { userCode: code.user_code }, { bearer: u.token })).status).toBe(200);
    return { known: { device_code: code.device_code, grant_type: "urn:ietf:params:oauth:grant-type:device_code" } };
  },
  "POST /two-factor/get-totp-uri": async (u) => (await enrolled(u), { bearer: u.token }),
  "POST /two-factor/verify-totp": async (u) => ({ bearer: u.token, known: { code: (await enrolled(u)).code() } }),
  "POST /two-factor/generate-backup-codes": async (u) => {
    const { code } = await enrolled(u);
    expect((await post(`${server.auth}/two-factor/verify-totp`, { code: code() }, { bearer: u.token })).status).toBe(200);
    return { bearer: u.token };
  },
  "POST /two-factor/verify-backup-code": async (u) => ({ bearer: u.token, known: { code: (await enrolled(u)).backupCodes[0] } }),
  "POST /organization/create": async (u) => ({ bearer: u.token, known: { slug: `oa-new-${process.pid}-${++seq}` } }),
  "POST /organization/check-slug": async (u) => ({ bearer: u.token, known: { slug: `oa-free-${process.pid}-${++seq}` } }),
  "POST /organization/update": async (u) => (await organizationOf(u), { bearer: u.token }),
  "POST /organization/delete": async (u) => ({ bearer: u.token, known: { organizationId: (await organizationOf(u)).id } }),
  "GET /organization/get-full-organization": async (u) => (await organizationOf(u), { bearer: u.token }),
  "POST /organization/set-active": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/list-members": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/get-active-member": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/get-active-member-role": async (u) => (await organizationOf(u), { bearer: u.token, known: { userId: u.id } }),
  "POST /organization/has-permission": async (u) => (await organizationOf(u), { bearer: u.token }),
  "POST /organization/add-member": async (u) => ({ bearer: admin.token, known: { userId: u.id, organizationId: (await organizationOf(await freshUser())).id, role: "member" } }),
  "POST /organization/remove-member": async (u) => {
    const other = await freshUser();
    await organizationOf(u, other);
    return { bearer: u.token, known: { memberIdOrEmail: other.email } };
  },
  "POST /organization/update-member-role": async (u) => {
    const other = await freshUser();
    const org = await organizationOf(u, other);
    return { bearer: u.token, known: { memberId: org.memberId, role: "admin" } };
  },
  "POST /organization/leave": async (u) => ({ bearer: u.token, known: { organizationId: (await organizationOf(await freshUser(), u)).id } }),
  "POST /organization/invite-member": async (u) => (await organizationOf(u), { bearer: u.token, known: { email: uniqueEmail("openapi-invited"), role: "member" } }),
  "POST /organization/accept-invitation": async (u) => ({ bearer: u.token, known: { invitationId: await invitationFor(u) } }),
  "POST /organization/reject-invitation": async (u) => ({ bearer: u.token, known: { invitationId: await invitationFor(u) } }),
  "GET /organization/get-invitation": async (u) => ({ bearer: u.token, known: { id: await invitationFor(u) } }),
  "GET /organization/list-user-invitations": async (u) => (await invitationFor(u), { bearer: u.token }),
  "GET /organization/list-invitations": async (u) => (await organizationOf(u), { bearer: u.token }),
  "POST /organization/cancel-invitation": async (u) => {
    await organizationOf(u);
    const res = await post(`${server.auth}/organization/invite-member`, { email: uniqueEmail("openapi-cancelled"), role: "member" }, { bearer: u.token });
    return { bearer: u.token, known: { invitationId: res.body.id } };
  },
  "POST /organization/create-team": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/list-teams": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/list-user-teams": async (u) => (await organizationOf(u), { bearer: u.token }),
  "POST /organization/update-team": async (u) => ({ bearer: u.token, known: { teamId: (await teamOf(u)).teamId } }),
  "POST /organization/remove-team": async (u) => {
    await teamOf(u);
    const second = await post(`${server.auth}/organization/create-team`, { name: "Second" }, { bearer: u.token });
    return { bearer: u.token, known: { teamId: second.body.id } };
  },
  "GET /organization/list-team-members": async (u) => ({ bearer: u.token, known: { teamId: (await teamOf(u)).teamId } }),
  "POST /organization/set-active-team": async (u) => ({ bearer: u.token, known: { teamId: (await teamOf(u)).teamId } }),
  "POST /organization/add-team-member": async (u) => {
    const other = await freshUser();
    await organizationOf(u, other);
    const team = await post(`${server.auth}/organization/create-team`, { name: "Team" }, { bearer: u.token });
    return { bearer: u.token, known: { teamId: team.body.id, userId: other.id } };
  },
  "POST /organization/remove-team-member": async (u) => {
    const { teamId } = await teamOf(u);
    return { bearer: u.token, known: { teamId, userId: u.id } };
  },
  "POST /organization/create-role": async (u) => (await organizationOf(u), { bearer: u.token, known: { role: `oa_role_${++seq}` } }),
  "GET /organization/list-roles": async (u) => (await organizationOf(u), { bearer: u.token }),
  "GET /organization/get-role": async (u) => ({ bearer: u.token, known: { roleName: await roleOf(u) } }),
  "POST /organization/update-role": async (u) => ({ bearer: u.token, known: { roleName: await roleOf(u) } }),
  "POST /organization/delete-role": async (u) => ({ bearer: u.token, known: { roleName: await roleOf(u) } }),
  "GET /admin/get-organization": async (u) => ({ known: { organizationId: (await organizationOf(u)).id } }),
  "POST /admin/update-user": async () => ({ extra: { data: { name: "Renamed by an admin" } } }),
  "POST /admin/revoke-user-session": async (u) => ({ known: { sessionToken: u.token } }),
  "GET /api-key/get": async (u) => ({ bearer: u.token, known: { id: (await apiKeyOf(u)).id } }),
  "POST /api-key/update": async (u) => ({ bearer: u.token, known: { keyId: (await apiKeyOf(u)).id }, extra: { name: "renamed" } }),
  "POST /api-key/delete": async (u) => ({ bearer: u.token, known: { keyId: (await apiKeyOf(u)).id } }),
  "POST /admin/revoke-api-key": async (u) => ({ known: { keyId: (await apiKeyOf(u)).id } }),
  "POST /api-key/verify": async (u) => ({ bearer: admin.token, known: { key: (await apiKeyOf(u)).key } }),
  "GET /oauth2/public-client": async () => ({ known: { client_id: await oauthClient(null) } }),
  "GET /oauth2/get-client": async (u) => ({ bearer: u.token, known: { client_id: await oauthClient(u.id) } }),
  "POST /oauth2/update-client": async (u) => ({ bearer: u.token, known: { client_id: await oauthClient(u.id) }, extra: { update: { client_name: "Renamed" } } }),
  "POST /oauth2/delete-client": async (u) => ({ bearer: u.token, known: { client_id: await oauthClient(u.id) } }),
  "POST /oauth2/client/rotate-secret": async (u) => ({ bearer: u.token, known: { client_id: await oauthClient(u.id, "client_secret_basic") } }),
  "GET /oauth2/get-consent": async (u) => ({ bearer: u.token, known: { id: await oauthConsent(u.id) } }),
  "POST /oauth2/update-consent": async (u) => ({ bearer: u.token, known: { id: await oauthConsent(u.id) }, extra: { update: { scopes: ["openid"] } } }),
  "POST /oauth2/delete-consent": async (u) => ({ bearer: u.token, known: { id: await oauthConsent(u.id) } }),
  "POST /admin/oauth2/update-client": async () => ({ known: { client_id: await oauthClient(null) }, extra: { update: { client_name: "Renamed" } } }),
  "POST /admin/oauth2/client/rotate-secret": async () => ({ known: { client_id: await oauthClient(null, "client_secret_basic") } }),
  "POST /admin/oauth2/delete-client": async () => ({ known: { client_id: await oauthClient(null) } }),
  "GET /admin/oauth2/get-client": async () => ({ known: { client_id: await oauthClient(null) } }),
  "GET /admin/oauth2/get-client-consents": async () => ({ known: { client_id: await oauthClient(null) } }),
  "POST /oauth2/create-client": async () => ({ extra: { redirect_uris: ["https://rp.example.test/cb"] } }),
  "POST /admin/oauth2/create-client": async () => ({ extra: { redirect_uris: ["https://rp.example.test/cb"] } }),
  "POST /admin/stop-impersonating": async (u) => {
    const res = await post(`${server.auth}/admin/impersonate-user`, { userId: u.id }, { bearer: admin.token });
    expect(res.status, res.text).toBe(200);
    return { bearer: res.body.session.token as string };
  },
};

/**
 * The routes whose example cannot succeed here, and the documented refusal each must give: they
 * need what no test request has (a mailed token, a provider's callback, a linked provider account,
 * an authenticator, a mailed code).
 */
const REFUSED: Record<string, string> = {
  "GET /delete-user/callback": "INVALID_TOKEN",
  "GET /verify-email": "INVALID_TOKEN",
  "GET /reset-password/{token}": "INVALID_TOKEN",
  "POST /reset-password": "INVALID_TOKEN",
  "GET /callback/{provider}": "INVALID_CALLBACK_REQUEST",
  "POST /get-access-token": "ACCOUNT_NOT_FOUND",
  "POST /refresh-token": "ACCOUNT_NOT_FOUND",
  "GET /account-info": "ACCOUNT_NOT_FOUND",
  "POST /unlink-account": "FAILED_TO_UNLINK_LAST_ACCOUNT",
  "POST /two-factor/verify-otp": "OTP_HAS_EXPIRED",
  "POST /passkey/verify-registration": "CHALLENGE_NOT_FOUND",
  "POST /passkey/verify-authentication": "CHALLENGE_NOT_FOUND",
  "POST /passkey/delete-passkey": "PASSKEY_NOT_FOUND",
  "POST /passkey/update-passkey": "PASSKEY_NOT_FOUND",
  "GET /magic-link/verify": "INVALID_TOKEN",
  "POST /magic-link/verify": "INVALID_TOKEN",
  "POST /sign-in/email-otp": "INVALID_OTP",
  "POST /email-otp/check-verification-otp": "INVALID_OTP",
  "POST /email-otp/verify-email": "INVALID_OTP",
  "POST /email-otp/reset-password": "INVALID_OTP",
  // The OpenID provider's endpoints need a registered client, a signed request or a token it issued
  // (test/integration/oidc-provider drives them with real relying parties).
  "GET /oauth2/authorize": "invalid_client",
  "POST /oauth2/authorize": "invalid_client",
  "GET /oauth2/end-session": "invalid_request",
  "GET /oauth2/userinfo": "invalid_token",
  "POST /oauth2/userinfo": "invalid_token",
  "POST /oauth2/consent": "INVALID_OAUTH_QUERY",
  "POST /oauth2/continue": "INVALID_OAUTH_QUERY",
  "POST /oauth2/introspect": "invalid_client",
  "POST /oauth2/revoke": "invalid_client",
  "POST /oauth2/token": "invalid_request",
  "POST /oauth2/register": "invalid_redirect_uri",
};

/** The request the document describes for one operation, with values by field name. */
function exampleRequest(path: string, op: Json, known: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const problems: string[] = [];
  const params: Json[] = op.parameters ?? [];
  const valueOf = (p: Json) => {
    const value = exampleOf(p.schema, known, p.name);
    const problem = check(p.schema, value);
    if (problem) problems.push(`parameter ${p.name}: ${problem}`);
    return String(value);
  };
  let url = `${server.auth}${path}`;
  for (const p of params.filter((p) => p.in === "path")) url = url.replace(`{${p.name}}`, encodeURIComponent(valueOf(p)));
  const query = new URLSearchParams(params.filter((p) => p.in === "query" && (p.required || Object.hasOwn(known, p.name))).map((p): [string, string] => [p.name, valueOf(p)]));
  if (query.size) url += `?${query}`;
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  const body = schema ? { ...(exampleOf(schema, known) as object), ...extra } : undefined;
  if (schema) {
    const problem = check(schema, body);
    if (problem) problems.push(`body: ${problem}`);
  }
  return { url, body, problems };
}

/** Whether the answer is one the operation documents, with a body its schema accepts. */
function documented(op: Json, res: Reply): string | null {
  const response = op.responses[String(res.status)];
  if (!response) return `answered ${res.status} ${res.text.slice(0, 200)}, not a documented status`;
  if (res.status === 302) return res.headers.get("location") ? null : "302 without Location";
  if (response.content?.["text/html"]) return res.headers.get("content-type")?.startsWith("text/html") ? null : "not text/html";
  if (response.content?.["application/x-ndjson"]) {
    if (!res.headers.get("content-type")?.startsWith("application/x-ndjson")) return "not application/x-ndjson";
    // The example's filters may match nothing: every line there is must match (test/integration/admin/audit-sign-ins.test.ts streams real ones).
    const lines = res.text.split("\n").filter(Boolean);
    for (const line of lines) {
      const problem = check(response.content["application/x-ndjson"].schema, JSON.parse(line));
      if (problem) return `${res.status} ${line.slice(0, 300)}: ${problem}`;
    }
    return null;
  }
  const problem = check(response.content["application/json"].schema, res.body);
  return problem && `${res.status} ${res.text.slice(0, 300)}: ${problem}`;
}

/** Values by field name for a route's example: the caller's own credentials, an admin's target user. */
function knownValues(procedure: string, user: SignedInUser, target: SignedInUser, isAdmin: boolean): Record<string, unknown> {
  return {
    email: procedure === "admin.createUser" ? uniqueEmail("openapi-created") : user.email,
    username: usernameOf(user),
    password: PASSWORD,
    currentPassword: PASSWORD,
    newPassword: "another horse battery",
    name: "OpenAPI example",
    role: "user",
    provider: "example",
    providerId: "example",
    client_id: "openapi-cli",
    accountId: "no-such-account",
    token: "no-such-token",
    code: "000000",
    userId: target.id,
    id: isAdmin ? target.id : "no-such-id",
    response: {},
  };
}

const CODE_OF = (res: Reply): string | undefined => res.body?.code ?? res.body?.error;

describe(`one example request per route, built from the document (${testDialect})`, () => {
  it("is accepted, answers a documented status and matches the documented schema", async () => {
    const failures: string[] = [];
    const refused: Record<string, string> = {};
    for (const route of routes) {
      const path = docPath(route.path);
      const op = api.paths[path][route.method.toLowerCase()];
      const user = await freshUser();
      const target = await freshUser();
      const isAdmin = route.path.startsWith("/admin/") && route.procedure !== "admin.stopImpersonating";
      const access = op.security ? (isAdmin ? admin.token : user.token) : undefined;
      const setup = await (SETUPS[key(route.method, path)]?.(isAdmin ? target : user) ?? Promise.resolve({} as Setup));
      const known = { ...knownValues(route.procedure, user, target, isAdmin), ...setup.known };
      const { url, body, problems } = exampleRequest(path, op, known, setup.extra);
      failures.push(...problems.map((p) => `${key(route.method, path)}: the example is not valid by the document: ${p}`));
      const bearer = setup.bearer ?? access;
      const res = await request(route.method, url, { ...(body !== undefined ? { json: body } : {}), ...(bearer ? { bearer } : {}) });
      const label = key(route.method, path);
      if (res.status === 404 || CODE_OF(res) === "VALIDATION_ERROR") failures.push(`${label}: refused the documented input: ${res.status} ${res.text}`);
      const problem = documented(op, res);
      if (problem) failures.push(`${label}: ${problem}`);
      if (res.status >= 400) refused[label] = CODE_OF(res) ?? String(res.status);
    }
    expect(failures).toEqual([]);
    expect(refused).toEqual(REFUSED);
  }, 120_000);
});

/** The codes a documented status carries (its schema's `code` or `error` enum). */
function documentedCodes(op: Json, status: number): string[] {
  const schema = op.responses[String(status)]?.content?.["application/json"]?.schema;
  const shapes: Json[] = schema ? (schema.anyOf ?? [schema]) : [];
  return shapes.flatMap((s) => s.properties?.code?.enum ?? s.properties?.error?.enum ?? []);
}

describe(`who the document says may call a route (${testDialect})`, () => {
  it("no session: 401 where it lists UNAUTHORIZED; an impersonation: 403 where it lists IMPERSONATION_NOT_ALLOWED; a plain user: 403 on admin routes", async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of routes) {
      const path = docPath(route.path);
      const label = key(route.method, path);
      const op = api.paths[path][route.method.toLowerCase()];
      const isAdmin = route.path.startsWith("/admin/") && route.procedure !== "admin.stopImpersonating";
      const user = await freshUser();
      const { url, body } = exampleRequest(path, op, knownValues(route.procedure, user, user, isAdmin));
      const send = (bearer?: string) => request(route.method, url, { ...(body !== undefined ? { json: body } : {}), ...(bearer ? { bearer } : {}) });
      const expectAnswer = (who: string, res: Reply, status: number, codes: string[]) => {
        checked++;
        const problem = documented(op, res);
        if (problem) failures.push(`${label} (${who}): ${problem}`);
        if (res.status !== status || !codes.includes(CODE_OF(res) ?? "")) failures.push(`${label} (${who}): expected ${status} ${codes.join("|")}, got ${res.status} ${res.text}`);
      };
      const needsSession = documentedCodes(op, 401).some((c) => c === "UNAUTHORIZED" || c === "unauthorized");
      if (needsSession) expectAnswer("no session", await send(), 401, ["UNAUTHORIZED", "unauthorized"]);
      if (needsSession && !isAdmin) {
        // Every session route, so one that refuses impersonations without documenting it fails too.
        const started = await post(`${server.auth}/admin/impersonate-user`, { userId: user.id }, { bearer: admin.token });
        const res = await send(started.body.session.token);
        if (documentedCodes(op, 403).includes("IMPERSONATION_NOT_ALLOWED")) expectAnswer("impersonation", res, 403, ["IMPERSONATION_NOT_ALLOWED"]);
        else if (CODE_OF(res) === "IMPERSONATION_NOT_ALLOWED" || documented(op, res)) failures.push(`${label} (impersonation): ${documented(op, res) ?? res.text}`);
      }
      const permissions = documentedCodes(op, 403).filter((c) => /^YOU_(ARE_NOT_ALLOWED|CANNOT_IMPERSONATE)/.test(c));
      if (isAdmin && route.procedure !== "admin.hasPermission") expectAnswer("a user without the permission", await send(user.token), 403, permissions);
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  }, 120_000);
});
