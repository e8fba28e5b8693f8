import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createPortcullisClient, type RouterOutputs } from "portcullis/client";
import { bootstrapAdmin, signUp } from "../../harness/admin-helpers.ts";
import { post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * A bearer client impersonates with the typed client alone. The impersonation
 * session's token is in the typed result (`session.token`, better-auth's body), so no custom
 * fetch has to read `set-auth-token`.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("admin.impersonateUser through the typed client", () => {
  it("returns the impersonation token in its typed result; that token alone acts as the user, until stopped", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    const headersSeen: (string | null)[] = [];
    const adminClient = createPortcullisClient({
      url: server.url,
      token: admin.token,
      // Records only: the test compares the header with the typed result, the client never needs it.
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        headersSeen.push(res.headers.get("set-auth-token"));
        return res;
      },
    });

    const started = await adminClient.admin.impersonateUser.mutate({ userId: target.id });
    expectTypeOf(started.session.token).toEqualTypeOf<string>();
    expectTypeOf(started.session.impersonatedBy).toEqualTypeOf<string | null>();
    expectTypeOf(started).toEqualTypeOf<RouterOutputs["admin"]["impersonateUser"]>();
    expect(started.session.token).toMatch(/^\S{32,}$/);
    expect(started.session.token).not.toBe(target.token);
    expect(started.session).toMatchObject({ userId: target.id, impersonatedBy: admin.id });
    expect(started.user.id).toBe(target.id);
    expect(headersSeen).toEqual([started.session.token]); // the same token the REST bridge sends as a header

    const asTarget = createPortcullisClient({ url: server.url, token: started.session.token });
    const seen = await asTarget.getSession.query();
    expect(seen?.user.id).toBe(target.id);
    expect(seen?.session.impersonatedBy).toBe(admin.id);
    expect(seen?.session.id).toBe(started.session.id);

    // A bearer client: ending it hands nothing back (docs/wire-contract.md §6), the admin keeps its own token.
    expect(await asTarget.admin.stopImpersonating.mutate()).toBeNull();
    expect(await asTarget.getSession.query()).toBeNull();
    expect((await adminClient.getSession.query())?.user.id).toBe(admin.id);
  });

  it("the REST bridge's body is the same object: better-auth's { session: { ..., token }, user }", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    const res = await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, { bearer: admin.token });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["session", "user"]);
    expect(res.body.session.token).toBe(res.headers.get("set-auth-token"));
  });
});
