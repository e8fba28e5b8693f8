/** Verification and password-reset mails (docs/wire-contract.md §4). */
import { PASSWORD, type Scenario } from "../runner.ts";
import { noteSessionCookie, signUp, withoutCallback } from "./helpers.ts";

const NEW_PASSWORD = "another horse battery";

export const mail: Scenario[] = [
  {
    name: "verification: a mailed link verifies the address",
    async run(s) {
      const alice = await signUp(s, "alice");
      const page = s.actor("resend-page");
      await s.call("send-verification-email (no session)", page, (c) => c.sendVerificationEmail({ email: alice.email, callbackURL: "/verified" }));
      const link = await s.mail("verification mail", alice.email);
      await s.browse("follow the link", alice.actor, link);
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.browse("follow the link again", alice.actor, link);
      await s.call("send-verification-email once verified (signed in)", alice.actor, (c) => c.sendVerificationEmail({ email: alice.email }));
    },
  },
  {
    name: "verification: signed-in requests, JSON answer without callbackURL",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("send-verification-email for another address", alice.actor, (c) => c.sendVerificationEmail({ email: s.email("other") }));
      await s.call("send-verification-email", alice.actor, (c) => c.sendVerificationEmail({ email: alice.email }));
      const link = await s.mail("verification mail", alice.email);
      await s.browse("follow the link", s.actor("other-browser"), link);
      await s.call("get-session", alice.actor, (c) => c.getSession());
    },
  },
  {
    name: "verification: the link without callbackURL answers { status: true, user: null }",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("send-verification-email", alice.actor, (c) => c.sendVerificationEmail({ email: alice.email }));
      const link = await s.mail("verification mail", alice.email);
      await s.browse("follow the link, JSON", alice.actor, withoutCallback(link));
      noteSessionCookie(s, "the link's session cookie", alice.actor);
      await s.call("get-session", alice.actor, (c) => c.getSession());
    },
  },
  {
    name: "verification: unknown addresses and bad tokens",
    async run(s) {
      const page = s.actor("page");
      await s.call("send-verification-email for an unknown address", page, (c) => c.sendVerificationEmail({ email: s.email("nobody") }));
      await s.call("malformed address", page, (c) => c.sendVerificationEmail({ email: "nope" }));
      await s.browse("made-up token", page, "/api/auth/verify-email?token=made-up");
      await s.browse("made-up token with callbackURL", page, "/api/auth/verify-email?token=made-up&callbackURL=%2Fverified");
    },
  },
  {
    name: "reset: request, follow the link, set a new password",
    async run(s) {
      const alice = await signUp(s, "alice");
      const page = s.actor("reset-page");
      await s.call("request-password-reset", page, (c) => c.requestPasswordReset({ email: alice.email, redirectTo: "/reset" }));
      const link = await s.mail("reset mail", alice.email);
      const landed = await s.browse("follow the link", page, link);
      const token = s.need(landed.location && new URL(landed.location, s.target.origin).searchParams.get("token"), "token in the redirect");
      await s.call("reset-password too short", page, (c) => c.resetPassword({ token, newPassword: "short" }));
      await s.call("reset-password", page, (c) => c.resetPassword({ token, newPassword: NEW_PASSWORD }));
      await s.call("the old session is revoked", alice.actor, (c) => c.getSession());
      await s.call("old password", s.actor("a"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("new password", s.actor("b"), (c) => c.signIn.email({ email: alice.email, password: NEW_PASSWORD }));
      await s.call("the token again", page, (c) => c.resetPassword({ token, newPassword: PASSWORD }));
      await s.browse("the link again", page, link);
    },
  },
  {
    name: "reset: unknown addresses and made-up tokens",
    async run(s) {
      const page = s.actor("page");
      await s.call("request-password-reset for an unknown address", page, (c) => c.requestPasswordReset({ email: s.email("nobody"), redirectTo: "/reset" }));
      await s.call("reset-password with a made-up token", page, (c) => c.resetPassword({ token: "made-up", newPassword: NEW_PASSWORD }));
      await s.browse("reset link with a made-up token", page, "/api/auth/reset-password/made-up?callbackURL=%2Freset");
      await s.call("request-password-reset with a foreign redirectTo", page, (c) => c.requestPasswordReset({ email: s.email("nobody"), redirectTo: "https://evil.example/" }));
    },
  },
];
