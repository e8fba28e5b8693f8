/**
 * The client and consent endpoints (@better-auth/oauth-provider's paths and bodies): a user's
 * own clients, secret rotation, deletion taking the client's tokens along, consents listed and
 * revoked (with the tokens), the admin's `oauthClient` permission and trusted clients.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent } from "../../../src/db/entities/index.ts";
import { bootstrapAdmin } from "../../harness/admin-helpers.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, signUp, startAuthorize, tokenRequest, userinfo } from "./helpers.ts";

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({}, { ownOrigin: true });
  token = (await post(`${server.auth}/sign-up/email`, { name: "Owner", email: `owner.${Date.now()}@example.test`, password: "password123" })).body.token;
});
afterAll(async () => {
  await server.close();
});

const call = (path: string, body?: unknown, bearer = token) => (body === undefined ? get(`${server.auth}${path}`, { bearer }) : post(`${server.auth}${path}`, body, { bearer }));

async function signInWith(clientId: string, secret: string | null) {
  const browser = await signUp(server);
  const p = pkce();
  const callback = await authorizeToCallback(server, browser, authorizeUrl(server, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid offline_access", code_challenge: p.challenge, code_challenge_method: "S256" }));
  const tokens = await tokenRequest(server, { grant_type: "authorization_code", code: callback.searchParams.get("code")!, code_verifier: p.verifier, redirect_uri: REDIRECT }, { clientId, clientSecret: secret });
  expect(tokens.status, tokens.text).toBe(200);
  return { browser, tokens: tokens.body };
}

describe("a user's own clients", () => {
  it("create (201, secret once), get, list, update, rotate the secret, delete", async () => {
    const created = await call("/oauth2/create-client", { redirect_uris: [REDIRECT], client_name: "Mine", grant_types: ["authorization_code", "refresh_token"], skip_consent: true });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ client_name: "Mine", client_secret: expect.any(String) });
    expect(created.body.skip_consent).toBeUndefined();
    const id = created.body.client_id as string;
    const got = await call(`/oauth2/get-client?client_id=${id}`);
    expect(got.body.client_secret).toBeUndefined();
    expect((await call("/oauth2/get-clients")).body.map((c: { client_id: string }) => c.client_id)).toEqual([id]);
    const updated = await call("/oauth2/update-client", { client_id: id, update: { client_name: "Renamed" } });
    expect(updated.body).toMatchObject({ client_name: "Renamed", redirect_uris: [REDIRECT] });
    expect((await call("/oauth2/update-client", { client_id: id, update: { redirect_uris: ["javascript:alert(1)"] } })).body.error).toBe("invalid_redirect_uri");

    const { tokens } = await signInWith(id, created.body.client_secret);
    const rotated = await call("/oauth2/client/rotate-secret", { client_id: id });
    expect(rotated.body.client_secret).not.toBe(created.body.client_secret);
    const old = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { clientId: id, clientSecret: created.body.client_secret });
    expect(old.status).toBe(401);

    expect((await call("/oauth2/delete-client", { client_id: id })).status).toBe(200);
    expect((await userinfo(server, tokens.access_token)).status).toBe(401);
    expect((await call(`/oauth2/get-client?client_id=${id}`)).status).toBe(404);
  });

  it("someone else's client is not found, whatever the action", async () => {
    const created = await call("/oauth2/create-client", { redirect_uris: [REDIRECT] });
    const other = await post(`${server.auth}/sign-up/email`, { name: "Other", email: `other.${Date.now()}@example.test`, password: "password123" });
    for (const [path, body] of [["/oauth2/get-client?client_id=" + created.body.client_id, undefined], ["/oauth2/update-client", { client_id: created.body.client_id, update: { client_name: "x" } }], ["/oauth2/delete-client", { client_id: created.body.client_id }], ["/oauth2/client/rotate-secret", { client_id: created.body.client_id }]] as const) {
      const res = await call(path, body, other.body.token);
      expect(res.status, path).toBe(404);
    }
  });
});

describe("consents", () => {
  it("are listed, narrowed, and revoked with the client's tokens", async () => {
    const created = await call("/oauth2/create-client", { redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"] });
    const { browser, tokens } = await signInWith(created.body.client_id, created.body.client_secret);
    const bearer = (await post(`${server.auth}/sign-in/email`, { email: browser.email, password: "password123" })).body.token as string;
    const list = await call("/oauth2/get-consents", undefined, bearer);
    expect(list.body).toEqual([expect.objectContaining({ clientId: created.body.client_id, userId: browser.userId, scopes: ["openid", "offline_access"] })]);
    const id = list.body[0].id as string;
    expect((await call(`/oauth2/get-consent?id=${id}`, undefined, bearer)).body.id).toBe(id);
    expect((await call(`/oauth2/get-consent?id=${id}`)).status).toBe(404);
    expect((await call("/oauth2/update-consent", { id, update: { scopes: ["openid"] } }, bearer)).body.scopes).toEqual(["openid"]);
    expect((await call("/oauth2/update-consent", { id, update: { scopes: ["admin"] } }, bearer)).body.error).toBe("invalid_scope");
    expect((await call("/oauth2/delete-consent", { id }, bearer)).status).toBe(200);
    const audit = await server.portcullis.app.orm.em.fork().find(AuditEvent, { targetId: browser.userId, action: { $like: "oauth-%" } }, { orderBy: { createdAt: "asc" } });
    expect(audit.map((e) => [e.action, JSON.parse(e.metadata!).clientId])).toEqual([
      ["oauth-consent", created.body.client_id],
      ["oauth-consent-revoked", created.body.client_id],
    ]);
    expect((await userinfo(server, tokens.access_token)).status).toBe(401);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { clientId: created.body.client_id, clientSecret: created.body.client_secret })).body.error).toBe("invalid_grant");
  });
});

describe("admin clients", () => {
  it("need the oauthClient permission; a trusted (skip_consent) client goes straight to the code", async () => {
    const plain = await call("/admin/oauth2/create-client", { redirect_uris: [REDIRECT] });
    expect(plain.status).toBe(403);
    expect(plain.body.code).toBe("YOU_ARE_NOT_ALLOWED_TO_CREATE_OAUTH_CLIENTS");
    const admin = await bootstrapAdmin(server);
    const created = await call("/admin/oauth2/create-client", { redirect_uris: [REDIRECT], skip_consent: true, client_name: "Grafana" }, admin.token);
    expect(created.status).toBe(200);
    expect(created.body.skip_consent).toBe(true);
    const browser = await signUp(server);
    const p = pkce();
    const next = await startAuthorize(server, browser, authorizeUrl(server, { response_type: "code", client_id: created.body.client_id, redirect_uri: REDIRECT, scope: "openid", code_challenge: p.challenge, code_challenge_method: "S256" }));
    expect(next.searchParams.get("code")).toEqual(expect.any(String));
    const disabled = await call("/admin/oauth2/update-client", { client_id: created.body.client_id, update: { disabled: true } }, admin.token);
    expect(disabled.body.disabled).toBe(true);
    const shown = await fetch(authorizeUrl(server, { response_type: "code", client_id: created.body.client_id, redirect_uri: REDIRECT, scope: "openid", code_challenge: p.challenge, code_challenge_method: "S256" }), { redirect: "manual", headers: { accept: "application/json" } });
    expect(shown.status).toBe(400);
  });
});

describe("the console's client procedures", () => {
  it("list every client, rotate any secret, show a client's consents, delete a client with its tokens; each under oauthClient", async () => {
    for (const path of ["/admin/oauth2/list-clients", "/admin/oauth2/get-client?client_id=x", "/admin/oauth2/get-client-consents?client_id=x"]) {
      expect((await call(path)).body.code, path).toBe("YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS");
    }
    expect((await call("/admin/oauth2/delete-client", { client_id: "x" })).body.code).toBe("YOU_ARE_NOT_ALLOWED_TO_DELETE_OAUTH_CLIENTS");
    expect((await call("/admin/oauth2/client/rotate-secret", { client_id: "x" })).body.code).toBe("YOU_ARE_NOT_ALLOWED_TO_UPDATE_OAUTH_CLIENTS");

    const admin = await bootstrapAdmin(server);
    const mine = await call("/oauth2/create-client", { redirect_uris: [REDIRECT], client_name: "Someone's", grant_types: ["authorization_code", "refresh_token"] });
    const listed = await call("/admin/oauth2/list-clients?limit=200", undefined, admin.token);
    expect(listed.status).toBe(200);
    expect(listed.body.clients.map((c: { client_id: string }) => c.client_id)).toContain(mine.body.client_id);
    expect(listed.body.clients.every((c: Record<string, unknown>) => c.client_secret === undefined)).toBe(true);
    // One client by id (the console's client page), as the list shows it; anyone's, never its secret.
    const one = await call(`/admin/oauth2/get-client?client_id=${mine.body.client_id}`, undefined, admin.token);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(listed.body.clients.find((c: { client_id: string }) => c.client_id === mine.body.client_id));
    expect((await call("/admin/oauth2/get-client?client_id=unknown", undefined, admin.token)).body.code).toBe("OAUTH_CLIENT_NOT_FOUND");

    const { browser, tokens } = await signInWith(mine.body.client_id, mine.body.client_secret);
    const consents = await call(`/admin/oauth2/get-client-consents?client_id=${mine.body.client_id}`, undefined, admin.token);
    expect(consents.body).toEqual([expect.objectContaining({ clientId: mine.body.client_id, userId: browser.userId, userEmail: browser.email, scopes: ["openid", "offline_access"] })]);

    const rotated = await call("/admin/oauth2/client/rotate-secret", { client_id: mine.body.client_id }, admin.token);
    expect(rotated.body.client_secret).toEqual(expect.any(String));
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { clientId: mine.body.client_id, clientSecret: mine.body.client_secret })).status).toBe(401);
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { clientId: mine.body.client_id, clientSecret: rotated.body.client_secret });
    expect(refreshed.status, refreshed.text).toBe(200);

    expect((await call("/admin/oauth2/delete-client", { client_id: mine.body.client_id }, admin.token)).status).toBe(200);
    expect((await userinfo(server, refreshed.body.access_token)).status).toBe(401);
    expect((await call("/admin/oauth2/delete-client", { client_id: mine.body.client_id }, admin.token)).body.code).toBe("OAUTH_CLIENT_NOT_FOUND");
    expect((await call("/admin/oauth2/list-clients?limit=0", undefined, admin.token)).status).toBe(400);
  });
});
