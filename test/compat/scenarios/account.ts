/** Account self-service (docs/wire-contract.md §9): change-email and delete-user, both paths of each. */
import { PASSWORD, type Run, type Scenario } from "../runner.ts";
import { noteSessionCookie, signUp, withoutCallback, type Person } from "./helpers.ts";

const DAY_MS = 24 * 3600 * 1000;

/** Verifies the person's current address the ordinary way (mail, link). */
async function verify(s: Run, person: Person): Promise<void> {
  await s.call("send-verification-email", person.actor, (c) => c.sendVerificationEmail({ email: person.email }));
  const link = await s.mail("verification mail", person.email);
  await s.browse("follow the verification link", person.actor, link);
}

export const account: Scenario[] = [
  {
    name: "change-email: an unverified user's address changes at once, then gets verified",
    async run(s) {
      const alice = await signUp(s, "alice");
      const newEmail = s.email("alice-new");
      await s.call("change-email", alice.actor, (c) => c.changeEmail({ newEmail, callbackURL: "/changed" }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      const link = await s.mail("verification mail at the new address", newEmail);
      await s.browse("follow the link", alice.actor, link);
      await s.call("get-session after verifying", alice.actor, (c) => c.getSession());
      await s.call("sign-in with the old address", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("sign-in with the new address", s.actor("b"), (c) => c.signIn.email({ email: newEmail, password: PASSWORD }));
    },
  },
  {
    name: "change-email: a verified user confirms at the old address, then verifies the new one",
    async run(s) {
      const alice = await signUp(s, "alice");
      await verify(s, alice);
      const newEmail = s.email("alice-new");
      await s.call("change-email", alice.actor, (c) => c.changeEmail({ newEmail, callbackURL: "/changed" }));
      await s.call("get-session: address not changed yet", alice.actor, (c) => c.getSession());
      const confirm = await s.mail("confirmation mail at the old address", alice.email);
      await s.browse("follow the confirmation link", alice.actor, confirm);
      await s.call("get-session after confirming", alice.actor, (c) => c.getSession());
      const verifyNew = await s.mail("verification mail at the new address", newEmail);
      await s.browse("follow the verification link", alice.actor, verifyNew);
      await s.call("get-session after verifying", alice.actor, (c) => c.getSession());
      await s.call("sign-in with the new address", s.actor("b"), (c) => c.signIn.email({ email: newEmail, password: PASSWORD }));
    },
  },
  {
    name: "change-email: the links' JSON answers; the proof re-sends the session cookie",
    async run(s) {
      const alice = await signUp(s, "alice");
      await verify(s, alice);
      const newEmail = s.email("alice-new");
      await s.call("change-email", alice.actor, (c) => c.changeEmail({ newEmail }));
      const confirm = await s.mail("old address: confirmation mail", alice.email);
      await s.browse("follow the confirmation link, JSON", alice.actor, withoutCallback(confirm));
      noteSessionCookie(s, "the confirmation's session cookie", alice.actor);
      const proof = await s.mail("new address: verification mail", newEmail);
      await s.browse("follow the verification link, JSON", alice.actor, withoutCallback(proof));
      noteSessionCookie(s, "the verification's session cookie", alice.actor);
      await s.call("get-session after verifying", alice.actor, (c) => c.getSession());
    },
  },
  {
    name: "change-email: a taken address answers like a free one and changes nothing",
    async run(s) {
      const alice = await signUp(s, "alice");
      const bob = await signUp(s, "bob");
      await s.call("change-email to bob's address", alice.actor, (c) => c.changeEmail({ newEmail: bob.email }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("change-email to bob's address, upper-cased", alice.actor, (c) => c.changeEmail({ newEmail: bob.email.toUpperCase() }));
      await s.call("bob still signs in", s.actor("b"), (c) => c.signIn.email({ email: bob.email, password: PASSWORD }));
    },
  },
  {
    name: "change-email: the same address, a malformed one, no session",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("the same address", alice.actor, (c) => c.changeEmail({ newEmail: alice.email }));
      await s.call("a malformed address", alice.actor, (c) => c.changeEmail({ newEmail: "not-an-email" }));
      await s.call("without a session", s.actor("nobody"), (c) => c.changeEmail({ newEmail: s.email("x") }));
    },
  },
  {
    name: "delete-user: a fresh session deletes at once",
    variant: { deleteUserMail: false },
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("delete-user", alice.actor, (c) => c.deleteUser({}));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("sign-in", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("sign-up again with the address", s.actor("b"), (c) => c.signUp.email({ name: "Alice", email: alice.email, password: PASSWORD }));
    },
  },
  {
    name: "delete-user: the right password deletes at once from a stale session",
    variant: { deleteUserMail: false },
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.target.ageSessions(2 * DAY_MS);
      await s.call("wrong password", alice.actor, (c) => c.deleteUser({ password: "not the password" }));
      await s.call("right password", alice.actor, (c) => c.deleteUser({ password: PASSWORD }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("sign-in", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
    },
  },
  {
    name: "delete-user: a stale session without the password gets a single-use link by mail",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.target.ageSessions(2 * DAY_MS);
      await s.call("delete-user", alice.actor, (c) => c.deleteUser({ callbackURL: "/goodbye" }));
      await s.call("get-session: not deleted yet", alice.actor, (c) => c.getSession());
      const link = await s.mail("confirmation mail", alice.email);
      await s.browse("the link in a browser without the session", s.actor("stranger"), link);
      await s.call("still there", alice.actor, (c) => c.getSession());
      await s.browse("the link in the user's browser", alice.actor, link);
      await s.call("get-session after the link", alice.actor, (c) => c.getSession());
      await s.call("sign-in", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.browse("the link again", alice.actor, link);
    },
  },
  {
    name: "delete-user: the mailed link without callbackURL, and a made-up token",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.target.ageSessions(2 * DAY_MS);
      await s.browse("a made-up token", alice.actor, "/api/auth/delete-user/callback?token=made-up-token");
      await s.call("delete-user", alice.actor, (c) => c.deleteUser({}));
      const link = await s.mail("confirmation mail", alice.email);
      await s.browse("the link", alice.actor, link);
      await s.call("get-session after the link", alice.actor, (c) => c.getSession());
    },
  },
  {
    name: "delete-user: without a session",
    async run(s) {
      await s.call("delete-user", s.actor("nobody"), (c) => c.deleteUser({ password: PASSWORD }));
    },
  },
];
