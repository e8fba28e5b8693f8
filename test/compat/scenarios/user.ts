/** Usernames (docs/wire-contract.md §4), update-user, change-password, verify-password (§4, §9). */
import { PASSWORD, type Scenario } from "../runner.ts";
import { byCreatedAt, noteSessionCookie, signUp } from "./helpers.ts";

const NEW_PASSWORD = "another horse battery";

export const user: Scenario[] = [
  {
    name: "username: sign up with a username, sign in with it in any case",
    async run(s) {
      const name = s.username("Alice");
      const alice = s.actor("alice");
      await s.call("is-username-available before", alice, (c) => c.isUsernameAvailable({ username: name }));
      await s.call("sign-up with username", alice, (c) =>
        c.signUp.email({ name: "Alice", email: s.email("alice"), password: PASSWORD, username: name, displayUsername: "Alice The Great" }),
      );
      await s.call("is-username-available after", alice, (c) => c.isUsernameAvailable({ username: name.toLowerCase() }));
      const browser = s.actor("browser");
      await s.call("sign-in/username upper-cased", browser, (c) => c.signIn.username({ username: name.toUpperCase(), password: PASSWORD }));
      await s.call("get-session", browser, (c) => c.getSession());
    },
  },
  {
    name: "username: taken, malformed and wrong",
    async run(s) {
      const name = s.username("bob");
      await signUp(s, "bob", { username: name });
      const carol = s.actor("carol");
      const email = s.email("carol");
      await s.call("taken username", carol, (c) => c.signUp.email({ name: "Carol", email, password: PASSWORD, username: name }));
      await s.call("too short", carol, (c) => c.signUp.email({ name: "Carol", email, password: PASSWORD, username: "ab" }));
      await s.call("too long", carol, (c) => c.signUp.email({ name: "Carol", email, password: PASSWORD, username: "a".repeat(31) }));
      await s.call("invalid characters", carol, (c) => c.signUp.email({ name: "Carol", email, password: PASSWORD, username: "carol smith!" }));
      await s.call("is-username-available of a malformed one", carol, (c) => c.isUsernameAvailable({ username: "no spaces here" }));
      await s.call("sign-in/username wrong password", carol, (c) => c.signIn.username({ username: name, password: "not the password" }));
      await s.call("sign-in/username unknown", carol, (c) => c.signIn.username({ username: s.username("nobody"), password: PASSWORD }));
    },
  },
  {
    name: "username: update-user changes it",
    async run(s) {
      const alice = await signUp(s, "alice", { username: s.username("alice") });
      const renamed = s.username("alice2");
      await s.call("update-user username", alice.actor, (c) => c.updateUser({ username: renamed }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("old username sign-in", s.actor("a"), (c) => c.signIn.username({ username: s.username("alice"), password: PASSWORD }));
      await s.call("new username sign-in", s.actor("b"), (c) => c.signIn.username({ username: renamed, password: PASSWORD }));
      const bob = await signUp(s, "bob", { username: s.username("bob") });
      await s.call("update-user to a taken username", bob.actor, (c) => c.updateUser({ username: renamed }));
    },
  },
  {
    name: "user: update-user name and image, nothing, or the email",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("update name and image", alice.actor, (c) => c.updateUser({ name: "Alice Renamed", image: "https://example.test/a.png" }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("clear the image", alice.actor, (c) => c.updateUser({ image: null }));
      await s.call("get-session after clearing", alice.actor, (c) => c.getSession());
      await s.call("nothing to update (the SDK sends an empty update as GET)", alice.actor, (c) => c.updateUser({}));
      await s.call("nothing to update, POST {}", alice.actor, (c) => c.$fetch("/update-user", { method: "POST", body: {} }));
      await s.call("email through update-user", alice.actor, (c) => c.$fetch("/update-user", { method: "POST", body: { email: s.email("other") } }));
    },
  },
  {
    name: "user: update-user re-sends the session cookie, with the configured Max-Age",
    async run(s) {
      const alice = await signUp(s, "alice");
      noteSessionCookie(s, "sign-up's session cookie", alice.actor);
      await s.call("update-user", alice.actor, (c) => c.updateUser({ name: "Alice Renamed" }));
      noteSessionCookie(s, "update-user's session cookie", alice.actor);
      await s.call("nothing to update", alice.actor, (c) => c.$fetch("/update-user", { method: "POST", body: {} }));
      noteSessionCookie(s, "a refused update's session cookie", alice.actor);
      const short = s.actor("alice-short");
      await s.call("sign-in without remember me", short, (c) => c.signIn.email({ email: alice.email, password: PASSWORD, rememberMe: false }));
      noteSessionCookie(s, "the browser-session cookie", short);
      await s.call("update-user in the browser session", short, (c) => c.updateUser({ image: null }));
      noteSessionCookie(s, "update-user's cookie in the browser session", short);
    },
  },
  {
    name: "user: change-password",
    async run(s) {
      const alice = await signUp(s, "alice");
      const other = s.actor("other");
      await s.call("sign-in elsewhere", other, (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("wrong current password", alice.actor, (c) => c.changePassword({ currentPassword: "not the password", newPassword: NEW_PASSWORD }));
      await s.call("new password too short", alice.actor, (c) => c.changePassword({ currentPassword: PASSWORD, newPassword: "short" }));
      await s.call("change-password", alice.actor, (c) => c.changePassword({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD }));
      await s.call("the other session lives on", other, (c) => c.getSession());
      await s.call("old password", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("new password", s.actor("b"), (c) => c.signIn.email({ email: alice.email, password: NEW_PASSWORD }));
      await s.call("change-password revoking the others", alice.actor, (c) =>
        c.changePassword({ currentPassword: NEW_PASSWORD, newPassword: PASSWORD, revokeOtherSessions: true }),
      );
      await s.call("the other session is gone", other, (c) => c.getSession());
      await s.call("own session, with the new token", alice.actor, (c) => c.getSession());
      await s.call("list-sessions", alice.actor, (c) => c.listSessions().then(byCreatedAt));
    },
  },
  {
    name: "user: verify-password",
    async run(s) {
      const alice = await signUp(s, "alice");
      const verify = (password: string) => (c: typeof alice.actor.client) =>
        c.$fetch<{ status: boolean }>("/verify-password", { method: "POST", body: { password } });
      await s.call("right password", alice.actor, verify(PASSWORD));
      await s.call("wrong password", alice.actor, verify("not the password"));
      await s.call("missing password", alice.actor, (c) => c.$fetch("/verify-password", { method: "POST", body: {} }));
      await s.call("without a session", s.actor("nobody"), verify(PASSWORD));
    },
  },
];
