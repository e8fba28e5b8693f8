import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * docs/wire-contract.md §2: listings carry a `token` per session that the revoke
 * endpoints accept. The caller's own session shows its raw token; every other one an opaque
 * handle that is never a credential. The database keeps digests only.
 */

let server: TestServer;
let trpc: string;
let admin: SignedInUser;

beforeAll(async () => {
  server = await startTestServer();
  trpc = `${server.url}/api/trpc`;
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

const alive = async (token: string) => (await get(`${server.auth}/get-session`, { bearer: token })).body !== null;

async function listed(token: string): Promise<Array<{ id: string; token: string }>> {
  const res = await get(`${server.auth}/list-sessions`, { bearer: token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A user with three sessions: [sign-up, second, third]. */
async function threeSessions() {
  const first = await signUp(server);
  const second = await signIn(server, first.email);
  const third = await signIn(server, first.email);
  return { user: first, tokens: [first.token, second.token, third.token], ids: await sessionIds([first, second, third]) };
}

async function sessionIds(users: SignedInUser[]): Promise<string[]> {
  const ids: string[] = [];
  for (const u of users) ids.push((await get(`${server.auth}/get-session`, { bearer: u.token })).body.session.id);
  return ids;
}

describe(`session handles in listings (${testDialect})`, () => {
  it("get-session echoes the presented token; list-sessions shows it for the caller and handles for the others", async () => {
    const { tokens, ids } = await threeSessions();
    const session = await get(`${server.auth}/get-session`, { bearer: tokens[1]! });
    expect(session.body.session.token).toBe(tokens[1]);

    const list = await listed(tokens[1]!);
    expect(list.map((s) => s.id).sort()).toEqual([...ids].sort());
    const own = list.find((s) => s.id === ids[1])!;
    expect(own.token).toBe(tokens[1]);
    for (const other of list.filter((s) => s.id !== ids[1])) {
      expect(tokens).not.toContain(other.token);
      expect(other.token).toMatch(/^sh\./);
      // Stable: the same handle on every listing.
      expect((await listed(tokens[1]!)).find((s) => s.id === other.id)!.token).toBe(other.token);
    }
  });

  it("a handle is never a credential: as Bearer or cookie it gets 401 / null", async () => {
    const { tokens, ids } = await threeSessions();
    const handle = (await listed(tokens[0]!)).find((s) => s.id === ids[2])!.token;
    expect((await get(`${server.auth}/get-session`, { bearer: handle })).body).toBeNull();
    expectError(await get(`${server.auth}/list-sessions`, { bearer: handle }), 401, "UNAUTHORIZED");
    expectError(await get(`${server.auth}/list-sessions`, { cookie: `portcullis.session_token=${handle}` }), 401, "UNAUTHORIZED");
    const viaTrpc = await get(`${trpc}/listSessions`, { bearer: handle });
    expect(viaTrpc.status).toBe(401);
    expect(await alive(tokens[2]!)).toBe(true);
  });

  it("revoke-session takes a handle (REST and tRPC) and the raw token, and only for the caller's own sessions", async () => {
    const { tokens, ids } = await threeSessions();
    const handles = await listed(tokens[0]!);
    const handleOf = (id: string) => handles.find((s) => s.id === id)!.token;

    const stranger = await signUp(server);
    expect((await post(`${server.auth}/revoke-session`, { token: handleOf(ids[1]!) }, { bearer: stranger.token })).status).toBe(200);
    expect(await alive(tokens[1]!)).toBe(true);

    expect((await post(`${server.auth}/revoke-session`, { token: handleOf(ids[1]!) }, { bearer: tokens[0]! })).body).toEqual({ status: true });
    expect(await alive(tokens[1]!)).toBe(false);

    const viaTrpc = await post(`${trpc}/revokeSession`, { token: handleOf(ids[2]!) }, { bearer: tokens[0]! });
    expect(viaTrpc.status, viaTrpc.text).toBe(200);
    expect(await alive(tokens[2]!)).toBe(false);
    expect(await alive(tokens[0]!)).toBe(true);
  });

  it("a forged or altered handle revokes nothing", async () => {
    const { tokens, ids } = await threeSessions();
    const handle = (await listed(tokens[0]!)).find((s) => s.id === ids[1])!.token;
    const forged = [`sh.${ids[1]}.${"A".repeat(43)}`, `${handle.slice(0, -2)}xx`, `sh.${ids[1]}`];
    for (const token of forged) await post(`${server.auth}/revoke-session`, { token }, { bearer: tokens[0]! });
    expect(await alive(tokens[1]!)).toBe(true);
  });

  it("admin list-user-sessions gives handles that revoke-user-session accepts as sessionToken", async () => {
    const { user, tokens, ids } = await threeSessions();
    const res = await adminPost(server, "list-user-sessions", { userId: user.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    const sessions = res.body.sessions as Array<{ id: string; token: string }>;
    expect(sessions).toHaveLength(3);
    for (const s of sessions) expect(tokens).not.toContain(s.token);
    const target = sessions.find((s) => s.id === ids[0])!;
    const revoked: Reply = await adminPost(server, "revoke-user-session", { sessionToken: target.token }, admin.token);
    expect(revoked.status, revoked.text).toBe(200);
    expect(await alive(tokens[0]!)).toBe(false);
    expect(await alive(tokens[1]!)).toBe(true);
    // Admin listings of the admin's own sessions show the caller's raw token like list-sessions.
    const own = await adminPost(server, "list-user-sessions", { userId: admin.id }, admin.token);
    expect(own.body.sessions.map((s: { token: string }) => s.token)).toContain(admin.token);
  });

  it("the database holds digests only: no listed token or handle is stored", async () => {
    const { user, tokens } = await threeSessions();
    const rows: Array<Record<string, unknown>> = await server.portcullis.app.orm.em
      .fork()
      .getConnection()
      .execute("select * from sessions where user_id = ?", [user.id]);
    const stored = JSON.stringify(rows);
    const handles = (await listed(tokens[0]!)).map((s) => s.token);
    for (const t of [...tokens, ...handles]) expect(stored).not.toContain(t);
    expect(rows.map((r) => r.token_hash).sort()).toEqual(tokens.map(sha256).sort());
  });

  it("the tRPC listSessions and getSession carry the same tokens", async () => {
    const { tokens } = await threeSessions();
    const got = await get(`${trpc}/getSession`, { bearer: tokens[2]! });
    expect(got.body.result.data.session.token).toBe(tokens[2]);
    const list = await get(`${trpc}/listSessions`, { bearer: tokens[2]! });
    expect(list.body.result.data.map((s: { token: string }) => s.token)).toContain(tokens[2]);
    expect((await listed(tokens[2]!)).map((s) => s.token).sort()).toEqual(list.body.result.data.map((s: { token: string }) => s.token).sort());
  });

  it("a signed-in user still lists after a password change rotates the session", async () => {
    const user = await signUp(server);
    const changed = await post(`${server.auth}/change-password`, { currentPassword: PASSWORD, newPassword: "another password 1", revokeOtherSessions: true }, { bearer: user.token });
    expect(changed.status, changed.text).toBe(200);
    expect((await listed(changed.body.token)).map((s) => s.token)).toEqual([changed.body.token]);
    expect((await adminGet(server, "get-user", { id: user.id }, admin.token)).status).toBe(200);
  });
});
