/** Passwordless (docs/wire-contract.md §10): better-auth's magic-link and email-otp plugins through magicLinkClient and emailOTPClient. */
import { PASSWORD, type Scenario } from "../runner.ts";
import { signUp } from "./helpers.ts";

const NEW_PASSWORD = "another horse battery";

/** A six-digit code that is not `code`. */
const otherCode = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, "0");

export const passwordless: Scenario[] = [
  {
    name: "magic link: the SDK verifies the mailed token (JSON), once",
    async run(s) {
      const email = s.email("alice");
      const alice = s.actor("alice");
      await s.call("sign-in/magic-link", alice, (c) => c.signIn.magicLink({ email, name: "Alice" }));
      const link = await s.mail("magic link mail", email);
      const token = s.need(new URL(link).searchParams.get("token"), "the link's token");
      await s.call("verify", alice, (c) => c.magicLink.verify({ query: { token } }));
      await s.call("get-session", alice, (c) => c.getSession());
      await s.call("verify again", s.actor("elsewhere"), (c) => c.magicLink.verify({ query: { token } }));
      await s.call("verify again, with callbacks", s.actor("elsewhere"), (c) => c.magicLink.verify({ query: { token, callbackURL: "/in", errorCallbackURL: "/oops" } }));
    },
  },
  {
    name: "magic link: a browser follows the mailed link to the callbacks",
    async run(s) {
      const bob = await signUp(s, "bob");
      await s.call("sign-out", bob.actor, (c) => c.signOut());
      const browser = s.actor("browser");
      await s.call("sign-in/magic-link", browser, (c) => c.signIn.magicLink({ email: bob.email, callbackURL: "/home", newUserCallbackURL: "/welcome" }));
      const link = await s.mail("magic link mail", bob.email);
      const token = s.need(new URL(link).searchParams.get("token"), "the link's token");
      await s.browse("open the link", browser, link);
      await s.submit("press the confirm button", browser, "/api/auth/magic-link/verify", { token, callbackURL: "/home", newUserCallbackURL: "/welcome" });
      await s.call("get-session", browser, (c) => c.getSession());
      // Both servers: the link proved the address of an unverified account, so its unproven password is gone.
      await s.call("the unproven password", s.actor("laptop"), (c) => c.signIn.email({ email: bob.email, password: PASSWORD }));
    },
  },
  {
    name: "magic link: a new address signs up at its first link",
    async run(s) {
      const email = s.email("carol");
      const carol = s.actor("carol");
      await s.call("sign-in/magic-link", carol, (c) => c.signIn.magicLink({ email, name: "Carol", callbackURL: "/home", newUserCallbackURL: "/welcome" }));
      const link = await s.mail("magic link mail", email);
      const token = s.need(new URL(link).searchParams.get("token"), "the link's token");
      await s.call("verify with callbacks", carol, (c) => c.magicLink.verify({ query: { token, callbackURL: "/home", newUserCallbackURL: "/welcome" } }));
      await s.call("get-session", carol, (c) => c.getSession());
    },
  },
  {
    name: "magic link: made-up tokens and foreign callbacks",
    async run(s) {
      const page = s.actor("page");
      await s.call("verify a made-up token", page, (c) => c.magicLink.verify({ query: { token: "made-up" } }));
      await s.call("verify a made-up token, with callbacks", page, (c) => c.magicLink.verify({ query: { token: "made-up", callbackURL: "/in", errorCallbackURL: "/oops" } }));
      await s.browse("a browser opens a made-up link", page, "/api/auth/magic-link/verify?token=made-up&callbackURL=%2Fin");
      await s.call("a made-up token with a literal % in the callbackURL", page, (c) => c.magicLink.verify({ query: { token: "made-up", callbackURL: "/100%" } }));
      await s.call("sign-in/magic-link with a foreign callbackURL", page, (c) => c.signIn.magicLink({ email: s.email("nobody"), callbackURL: "https://evil.example/" }));
      await s.call("sign-in/magic-link with a malformed email", page, (c) => c.signIn.magicLink({ email: "nope" }));
    },
  },
  {
    name: "email OTP: a sign-in code creates the account and works once",
    async run(s) {
      const email = s.email("dave");
      const dave = s.actor("dave");
      await s.call("send-verification-otp sign-in", dave, (c) => c.emailOtp.sendVerificationOtp({ email, type: "sign-in" }));
      const code = await s.code("the mailed code", email);
      await s.call("sign-in with a wrong code", dave, (c) => c.signIn.emailOtp({ email, otp: otherCode(code) }));
      await s.call("sign-in/email-otp", dave, (c) => c.signIn.emailOtp({ email, otp: code, name: "Dave" }));
      await s.call("get-session", dave, (c) => c.getSession());
      await s.call("the code again", s.actor("elsewhere"), (c) => c.signIn.emailOtp({ email, otp: code }));
    },
  },
  {
    name: "email OTP: three wrong tries, then TOO_MANY_ATTEMPTS; a new code works",
    async run(s) {
      const erin = await signUp(s, "erin");
      const phone = s.actor("phone");
      await s.call("send-verification-otp sign-in", phone, (c) => c.emailOtp.sendVerificationOtp({ email: erin.email, type: "sign-in" }));
      const code = await s.code("the mailed code", erin.email);
      for (const n of [1, 2, 3]) await s.call(`wrong code ${n}`, phone, (c) => c.signIn.emailOtp({ email: erin.email, otp: otherCode(code, n) }));
      await s.call("the right code, too late", phone, (c) => c.signIn.emailOtp({ email: erin.email, otp: code }));
      await s.call("the right code once more", phone, (c) => c.signIn.emailOtp({ email: erin.email, otp: code }));
      await s.call("send a new code", phone, (c) => c.emailOtp.sendVerificationOtp({ email: erin.email, type: "sign-in" }));
      const fresh = await s.code("the new code", erin.email);
      await s.call("sign-in with the new code", phone, (c) => c.signIn.emailOtp({ email: erin.email, otp: fresh }));
    },
  },
  {
    name: "email OTP: verify the address with a code; check-verification-otp",
    async run(s) {
      const frank = await signUp(s, "frank");
      await s.call("send-verification-otp email-verification", frank.actor, (c) => c.emailOtp.sendVerificationOtp({ email: frank.email, type: "email-verification" }));
      const code = await s.code("the mailed code", frank.email);
      await s.call("check-verification-otp, wrong", frank.actor, (c) => c.emailOtp.checkVerificationOtp({ email: frank.email, type: "email-verification", otp: otherCode(code) }));
      await s.call("check-verification-otp", frank.actor, (c) => c.emailOtp.checkVerificationOtp({ email: frank.email, type: "email-verification", otp: code }));
      await s.call("verify-email", frank.actor, (c) => c.emailOtp.verifyEmail({ email: frank.email, otp: code }));
      await s.call("get-session", frank.actor, (c) => c.getSession());
      await s.call("verify-email again", frank.actor, (c) => c.emailOtp.verifyEmail({ email: frank.email, otp: code }));
    },
  },
  {
    name: "email OTP: check-verification-otp of a sign-in code for a new address",
    async run(s) {
      const email = s.email("gina");
      const gina = s.actor("gina");
      await s.call("send-verification-otp sign-in", gina, (c) => c.emailOtp.sendVerificationOtp({ email, type: "sign-in" }));
      const code = await s.code("the mailed code", email);
      await s.call("check-verification-otp", gina, (c) => c.emailOtp.checkVerificationOtp({ email, type: "sign-in", otp: code }));
      await s.call("sign-in/email-otp", gina, (c) => c.signIn.emailOtp({ email, otp: code }));
    },
  },
  {
    name: "email OTP: reset the password with a code",
    async run(s) {
      const hank = await signUp(s, "hank");
      const page = s.actor("reset-page");
      await s.call("email-otp/request-password-reset", page, (c) => c.emailOtp.requestPasswordReset({ email: hank.email }));
      const first = await s.code("the mailed code", hank.email);
      await s.call("forget-password/email-otp (the older name)", page, (c) => c.forgetPassword.emailOtp({ email: hank.email }));
      const code = await s.code("the second code", hank.email);
      await s.call("the first code, replaced", page, (c) => c.emailOtp.resetPassword({ email: hank.email, otp: first === code ? otherCode(code) : first, password: NEW_PASSWORD }));
      await s.call("reset-password too short", page, (c) => c.emailOtp.resetPassword({ email: hank.email, otp: code, password: "short" }));
      await s.call("reset-password", page, (c) => c.emailOtp.resetPassword({ email: hank.email, otp: code, password: NEW_PASSWORD }));
      await s.call("the old session is revoked", hank.actor, (c) => c.getSession());
      await s.call("old password", s.actor("a"), (c) => c.signIn.email({ email: hank.email, password: PASSWORD }));
      await s.call("new password", s.actor("b"), (c) => c.signIn.email({ email: hank.email, password: NEW_PASSWORD }));
    },
  },
  {
    name: "email OTP: unknown addresses and bad input",
    async run(s) {
      const page = s.actor("page");
      const nobody = s.email("nobody");
      await s.call("request-password-reset for an unknown address", page, (c) => c.emailOtp.requestPasswordReset({ email: nobody }));
      await s.call("email-verification code for an unknown address", page, (c) => c.emailOtp.sendVerificationOtp({ email: nobody, type: "email-verification" }));
      await s.call("reset-password for an unknown address", page, (c) => c.emailOtp.resetPassword({ email: nobody, otp: "123456", password: NEW_PASSWORD }));
      await s.call("verify-email for an unknown address", page, (c) => c.emailOtp.verifyEmail({ email: nobody, otp: "123456" }));
      await s.call("send-verification-otp with a malformed email", page, (c) => c.emailOtp.sendVerificationOtp({ email: "nope", type: "sign-in" }));
      await s.call("send-verification-otp of type change-email", page, (c) => c.emailOtp.sendVerificationOtp({ email: nobody, type: "change-email" }));
    },
  },
];
