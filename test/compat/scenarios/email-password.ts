/** Email and password (docs/wire-contract.md §3, §4): sign-up, sign-in, sign-out, sessions. */
import { PASSWORD, type Scenario } from "../runner.ts";
import { byCreatedAt, signUp } from "./helpers.ts";

export const emailPassword: Scenario[] = [
  {
    name: "email: sign up, read the session, sign out",
    async run(s) {
      const alice = s.actor("alice");
      await s.call("sign-up", alice, (c) => c.signUp.email({ name: "Alice", email: s.email("alice"), password: PASSWORD }));
      await s.call("get-session", alice, (c) => c.getSession());
      await s.call("sign-out", alice, (c) => c.signOut());
      await s.call("get-session after sign-out", alice, (c) => c.getSession());
      await s.call("sign-out again", alice, (c) => c.signOut());
    },
  },
  {
    name: "email: sign-up refuses a taken email, whatever its case",
    async run(s) {
      const alice = await signUp(s, "alice");
      const again = s.actor("again");
      await s.call("sign-up with the same email", again, (c) => c.signUp.email({ name: "Again", email: alice.email, password: PASSWORD }));
      await s.call("sign-up with the email upper-cased", again, (c) => c.signUp.email({ name: "Again", email: alice.email.toUpperCase(), password: PASSWORD }));
      await s.call("get-session of the refused one", again, (c) => c.getSession());
    },
  },
  {
    name: "email: sign-up validation",
    async run(s) {
      const bob = s.actor("bob");
      const email = s.email("bob");
      await s.call("password too short", bob, (c) => c.signUp.email({ name: "Bob", email, password: "short" }));
      await s.call("password too long", bob, (c) => c.signUp.email({ name: "Bob", email, password: "x".repeat(129) }));
      await s.call("malformed email", bob, (c) => c.signUp.email({ name: "Bob", email: "not-an-email", password: PASSWORD }));
      await s.call("missing name", bob, (c) => c.$fetch("/sign-up/email", { method: "POST", body: { email, password: PASSWORD } }));
      await s.call("valid at last", bob, (c) => c.signUp.email({ name: "Bob", email, password: PASSWORD, image: "https://example.test/bob.png" }));
    },
  },
  {
    name: "email: sign-in with right and wrong credentials",
    async run(s) {
      const alice = await signUp(s, "alice");
      const browser = s.actor("browser");
      await s.call("wrong password", browser, (c) => c.signIn.email({ email: alice.email, password: "not the password" }));
      await s.call("unknown email", browser, (c) => c.signIn.email({ email: s.email("nobody"), password: PASSWORD }));
      await s.call("malformed email", browser, (c) => c.signIn.email({ email: "nope", password: PASSWORD }));
      await s.call("get-session after failures", browser, (c) => c.getSession());
      await s.call("right password, email upper-cased", browser, (c) => c.signIn.email({ email: alice.email.toUpperCase(), password: PASSWORD }));
      await s.call("get-session", browser, (c) => c.getSession());
    },
  },
  {
    name: "email: sign-in with callbackURL and rememberMe false",
    async run(s) {
      const alice = await signUp(s, "alice");
      const browser = s.actor("browser");
      await s.call("sign-in", browser, (c) => c.signIn.email({ email: alice.email, password: PASSWORD, callbackURL: "/dashboard", rememberMe: false }));
      await s.call("get-session", browser, (c) => c.getSession());
      await s.call("sign-in with a foreign callbackURL", browser, (c) => c.signIn.email({ email: alice.email, password: PASSWORD, callbackURL: "https://evil.example/steal" }));
    },
  },
  {
    name: "sessions: list, revoke one, revoke the others, revoke all",
    async run(s) {
      const alice = await signUp(s, "alice");
      const second = s.actor("second");
      const third = s.actor("third");
      await s.call("sign-in second", second, (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("sign-in third", third, (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      const listed = await s.call("list-sessions", alice.actor, (c) => c.listSessions().then(byCreatedAt));
      const last = s.need(listed?.at(-1), "the third session in the listing");
      await s.call("revoke-session of the third (listing token)", alice.actor, (c) => c.revokeSession({ token: last.token }));
      await s.call("third's get-session", third, (c) => c.getSession());
      await s.call("list-sessions after revoke-session", alice.actor, (c) => c.listSessions().then(byCreatedAt));
      await s.call("revoke-other-sessions", alice.actor, (c) => c.revokeOtherSessions());
      await s.call("second's get-session", second, (c) => c.getSession());
      await s.call("list-sessions after revoke-other-sessions", alice.actor, (c) => c.listSessions().then(byCreatedAt));
      await s.call("revoke-sessions", alice.actor, (c) => c.revokeSessions());
      await s.call("own get-session after revoke-sessions", alice.actor, (c) => c.getSession());
    },
  },
  {
    name: "sessions: a browser whose session was revoked elsewhere",
    async run(s) {
      const alice = await signUp(s, "alice");
      const other = s.actor("other");
      await s.call("sign-in elsewhere", other, (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("revoke-other-sessions elsewhere", other, (c) => c.revokeOtherSessions());
      alice.actor.token = null; // a browser: only its (now stale) cookie
      await s.call("get-session with the stale cookie", alice.actor, (c) => c.getSession());
      await s.call("list-sessions with the stale cookie", alice.actor, (c) => c.listSessions().then(byCreatedAt));
    },
  },
  {
    name: "sessions: endpoints that need a session, without one",
    async run(s) {
      const nobody = s.actor("nobody");
      await s.call("get-session", nobody, (c) => c.getSession());
      await s.call("list-sessions", nobody, (c) => c.listSessions().then(byCreatedAt));
      await s.call("sign-out", nobody, (c) => c.signOut());
      await s.call("revoke-sessions", nobody, (c) => c.revokeSessions());
      await s.call("update-user", nobody, (c) => c.updateUser({ name: "Nobody" }));
      await s.call("change-password", nobody, (c) => c.changePassword({ currentPassword: PASSWORD, newPassword: "another password" }));
      await s.call("list-accounts", nobody, (c) => c.listAccounts());
      nobody.token = "not-a-real-session-token";
      await s.call("get-session with a made-up bearer token", nobody, (c) => c.getSession());
      await s.call("list-sessions with a made-up bearer token", nobody, (c) => c.listSessions().then(byCreatedAt));
    },
  },
];
