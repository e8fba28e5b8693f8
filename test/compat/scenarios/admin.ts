/** The admin plugin's endpoints, every one (docs/wire-contract.md §6). */
import { expect } from "vitest";
import { PASSWORD, type Scenario } from "../runner.ts";
import { admin, byCreatedAt, noteSessionCookie, signUp } from "./helpers.ts";

const NEW_PASSWORD = "another horse battery";

export const adminScenarios: Scenario[] = [
  {
    name: "admin: create, get, update, set-role, set-user-password, remove",
    async run(s) {
      const root = await admin(s);
      const email = s.email("created");
      const created = await s.call("create-user", root.actor, (c) => c.admin.createUser({ email, password: PASSWORD, name: "Created", role: "user" }));
      const userId = s.need(created?.user.id, "created user id");
      await s.call("create-user with a taken email", root.actor, (c) => c.admin.createUser({ email, password: PASSWORD, name: "Again" }));
      await s.call("get-user", root.actor, (c) => c.admin.getUser({ query: { id: userId } }));
      await s.call("update-user", root.actor, (c) => c.admin.updateUser({ userId, data: { name: "Updated", image: "https://example.test/u.png" } }));
      await s.call("set-role", root.actor, (c) => c.admin.setRole({ userId, role: "admin" }));
      await s.call("set-role to an unknown role", root.actor, (c) => c.admin.setRole({ userId, role: "emperor" as "admin" }));
      await s.call("set-user-password", root.actor, (c) => c.admin.setUserPassword({ userId, newPassword: NEW_PASSWORD }));
      await s.call("sign-in with the new password", s.actor("created"), (c) => c.signIn.email({ email, password: NEW_PASSWORD }));
      await s.call("set-user-password too short", root.actor, (c) => c.admin.setUserPassword({ userId, newPassword: "short" }));
      await s.call("remove-user", root.actor, (c) => c.admin.removeUser({ userId }));
      await s.call("get-user after removing", root.actor, (c) => c.admin.getUser({ query: { id: userId } }));
      await s.call("remove yourself", root.actor, (c) => c.admin.removeUser({ userId: root.id }));
      await s.call("update an unknown user", root.actor, (c) => c.admin.updateUser({ userId: "no-such-user", data: { name: "X" } }));
    },
  },
  {
    name: "admin: list-users with search, filter, sort and paging",
    async run(s) {
      const root = await admin(s);
      for (const name of ["ann", "ben", "cat"]) await signUp(s, name);
      const tag = s.email("").split("@")[0]!; // ".cN": what every address of this scenario holds
      const list = (step: string, query: Record<string, string | number>) => s.call(step, root.actor, (c) => c.admin.listUsers({ query }));
      await list("search by email, sorted", { searchValue: tag, searchField: "email", searchOperator: "contains", sortBy: "email", sortDirection: "asc" });
      await list("first page of two", { searchValue: tag, searchField: "email", searchOperator: "contains", sortBy: "email", sortDirection: "desc", limit: 2, offset: 0 });
      await list("second page", { searchValue: tag, searchField: "email", searchOperator: "contains", sortBy: "email", sortDirection: "desc", limit: 2, offset: 2 });
      await list("search by name, starts_with", { searchValue: "Be", searchField: "name", searchOperator: "starts_with", filterField: "email", filterValue: s.email("ben"), filterOperator: "eq" });
      await list("filter by role", { filterField: "role", filterValue: "user,admin", filterOperator: "eq" });
    },
  },
  {
    name: "admin: ban and unban",
    async run(s) {
      const root = await admin(s);
      const bob = await signUp(s, "bob");
      await s.call("ban-user", root.actor, (c) => c.admin.banUser({ userId: bob.id, banReason: "spam", banExpiresIn: 3600 }));
      await s.call("bob's session is gone", bob.actor, (c) => c.getSession());
      await s.call("bob signs in while banned", s.actor("b1"), (c) => c.signIn.email({ email: bob.email, password: PASSWORD }));
      await s.call("list-users shows the ban", root.actor, (c) => c.admin.listUsers({ query: { filterField: "email", filterValue: bob.email, filterOperator: "eq" } }));
      await s.call("unban-user", root.actor, (c) => c.admin.unbanUser({ userId: bob.id }));
      await s.call("bob signs in again", s.actor("b2"), (c) => c.signIn.email({ email: bob.email, password: PASSWORD }));
      await s.call("ban yourself", root.actor, (c) => c.admin.banUser({ userId: root.id }));
      await s.call("ban without a reason or expiry", root.actor, (c) => c.admin.banUser({ userId: bob.id }));
      await s.call("get-user of the banned", root.actor, (c) => c.admin.getUser({ query: { id: bob.id } }));
    },
  },
  {
    name: "admin: impersonate and stop impersonating",
    async run(s) {
      const root = await admin(s);
      const bob = await signUp(s, "bob");
      const other = await admin(s, "other");
      await s.call("stop-impersonating when not impersonating", root.actor, (c) => c.admin.stopImpersonating());
      await s.call("impersonate an admin", root.actor, (c) => c.admin.impersonateUser({ userId: other.id }));
      await s.call("impersonate-user", root.actor, (c) => c.admin.impersonateUser({ userId: bob.id }));
      await s.call("get-session while impersonating", root.actor, (c) => c.getSession());
      await s.call("bob's sessions include the impersonation", bob.actor, (c) => c.listSessions().then(byCreatedAt));
      await s.call("stop-impersonating", root.actor, (c) => c.admin.stopImpersonating());
      await s.call("get-session after stopping", root.actor, (c) => c.getSession());
    },
  },
  {
    name: "admin: session cookies through an impersonation keep the configured Max-Age",
    async run(s) {
      const root = await admin(s);
      noteSessionCookie(s, "the admin's sign-in cookie", root.actor);
      const bob = await signUp(s, "bob");
      await s.call("impersonate-user", root.actor, (c) => c.admin.impersonateUser({ userId: bob.id }));
      noteSessionCookie(s, "the impersonation's cookie", root.actor);
      await s.call("stop-impersonating", root.actor, (c) => c.admin.stopImpersonating());
      noteSessionCookie(s, "the admin's cookie handed back", root.actor);
    },
  },
  {
    name: "admin: list, revoke one and revoke all of a user's sessions",
    async run(s) {
      const root = await admin(s);
      const bob = await signUp(s, "bob");
      const second = s.actor("bob-2");
      await s.call("bob signs in again", second, (c) => c.signIn.email({ email: bob.email, password: PASSWORD }));
      const listed = await s.call("list-user-sessions", root.actor, (c) =>
        c.admin.listUserSessions({ userId: bob.id }).then((r) => (r.data && byCreatedAt({ data: r.data.sessions }), r)),
      );
      const newest = s.need(listed?.sessions.at(-1), "bob's newest session");
      await s.call("revoke-user-session", root.actor, (c) => c.admin.revokeUserSession({ sessionToken: newest.token }));
      await s.call("bob's second session is gone", second, (c) => c.getSession());
      await s.call("bob's first session lives", bob.actor, (c) => c.getSession());
      await s.call("revoke-user-sessions", root.actor, (c) => c.admin.revokeUserSessions({ userId: bob.id }));
      await s.call("bob's first session is gone", bob.actor, (c) => c.getSession());
      await s.call("list-user-sessions after", root.actor, (c) => c.admin.listUserSessions({ userId: bob.id }));
    },
  },
  {
    name: "admin: has-permission, plain users and no session",
    async run(s) {
      const root = await admin(s);
      const bob = await signUp(s, "bob");
      const has = (permissions: Record<string, string[]>) => (c: typeof bob.actor.client) => c.admin.hasPermission({ permissions });
      await s.call("admin: user create", root.actor, has({ user: ["create"] }));
      await s.call("admin: user create and session revoke", root.actor, has({ user: ["create"], session: ["revoke"] }));
      await s.call("admin: impersonate-admins", root.actor, has({ user: ["impersonate-admins"] }));
      await s.call("user: user list", bob.actor, has({ user: ["list"] }));
      await s.call("user: list-users", bob.actor, (c) => c.admin.listUsers({ query: {} }));
      await s.call("user: create-user", bob.actor, (c) => c.admin.createUser({ email: s.email("x"), password: PASSWORD, name: "X" }));
      await s.call("user: ban-user", bob.actor, (c) => c.admin.banUser({ userId: root.id }));
      await s.call("user: impersonate-user", bob.actor, (c) => c.admin.impersonateUser({ userId: root.id }));
      await s.call("user: set-role", bob.actor, (c) => c.admin.setRole({ userId: bob.id, role: "admin" }));
      const nobody = s.actor("nobody");
      await s.call("no session: list-users", nobody, (c) => c.admin.listUsers({ query: {} }));
      await s.call("no session: has-permission", nobody, has({ user: ["list"] }));
    },
  },
  {
    name: "admin: list-audit-events (a Portcullis extension)",
    async run(s) {
      const root = await admin(s);
      const bob = await signUp(s, "bob");
      await s.call("ban-user", root.actor, (c) => c.admin.banUser({ userId: bob.id }));
      const events = await s.call("list-audit-events", root.actor, (c) => c.$fetch<{ events: Array<Record<string, unknown>> }>("/admin/list-audit-events", { query: { limit: 100 } }));
      if (s.side === "portcullis") {
        // better-auth has no such endpoint (404); what CONTRACT §6 asks of ours is checked here.
        expect(events?.events.find((e) => e.targetId === bob.id)).toMatchObject({ action: "ban-user", actorId: root.id, impersonatorId: null });
      }
    },
  },
];
