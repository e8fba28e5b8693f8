/** Two-factor (docs/wire-contract.md §10): better-auth's two-factor plugin through twoFactorClient. */
import { PASSWORD, type Scenario } from "../runner.ts";
import { signUp } from "./helpers.ts";
import { enrolled, otherCode, secretOf, signInPending, totpCode, wrongTotpCode } from "./two-factor-helpers.ts";

export const twoFactor: Scenario[] = [
  {
    name: "two-factor: enable, then the first TOTP code turns it on",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("enable with a wrong password", alice.actor, (c) => c.twoFactor.enable({ password: "not the password" }));
      const enabled = await s.call("enable", alice.actor, (c) => c.twoFactor.enable({ password: PASSWORD }));
      const secret = s.need(secretOf(enabled?.totpURI), "the TOTP secret");
      await s.call("sign-in before the first code", s.actor("laptop"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
      await s.call("get-session: not on yet", alice.actor, (c) => c.getSession());
      const wrong = await wrongTotpCode(secret);
      await s.call("verify-totp with a wrong code", alice.actor, (c) => c.twoFactor.verifyTotp({ code: wrong }));
      const code = await totpCode(secret, -1);
      await s.call("activate alice", alice.actor, (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("get-session: on", alice.actor, (c) => c.getSession());
      const uri = await s.call("get-totp-uri", alice.actor, (c) => c.twoFactor.getTotpUri({ password: PASSWORD }));
      s.note("get-totp-uri: the same secret", secretOf(uri?.totpURI) === secret);
      await s.call("get-totp-uri with a wrong password", alice.actor, (c) => c.twoFactor.getTotpUri({ password: "not the password" }));
    },
  },
  {
    name: "two-factor: sign-in asks for the second step, verify-totp completes it",
    async run(s) {
      const alice = await enrolled(s, "alice");
      await s.call("sign-out", alice.actor, (c) => c.signOut());
      const laptop = await signInPending(s, alice, "laptop");
      await s.call("get-session while pending", laptop, (c) => c.getSession());
      const code = await totpCode(alice.secret, 0);
      await s.call("verify-totp from another browser", s.actor("elsewhere"), (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("verify-totp", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("get-session", laptop, (c) => c.getSession());
      const again = await totpCode(alice.secret, 1);
      await s.call("verify-totp once signed in", laptop, (c) => c.twoFactor.verifyTotp({ code: again }));
    },
  },
  {
    name: "two-factor: rememberMe false carries through the second step",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const laptop = s.actor("laptop");
      await s.call("sign-in, rememberMe false", laptop, (c) => c.signIn.email({ email: alice.email, password: PASSWORD, rememberMe: false }));
      const code = await totpCode(alice.secret, 0);
      await s.call("verify-totp", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("get-session", laptop, (c) => c.getSession());
    },
  },
  {
    name: "two-factor: an accepted TOTP code does not work a second time",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const laptop = await signInPending(s, alice, "laptop");
      const code = await totpCode(alice.secret, 0);
      await s.call("verify-totp", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      const phone = await signInPending(s, alice, "phone");
      await s.call("the same code again", phone, (c) => c.twoFactor.verifyTotp({ code }));
      const tablet = await signInPending(s, alice, "tablet");
      const next = await totpCode(alice.secret, 1);
      await s.call("the next code", tablet, (c) => c.twoFactor.verifyTotp({ code: next }));
    },
  },
  {
    name: "two-factor: sign-in/username asks for the second step too",
    async run(s) {
      const username = s.username("alice");
      const alice = await enrolled(s, "alice", { username });
      const laptop = s.actor("laptop");
      await s.call("sign-in/username", laptop, (c) => c.signIn.username({ username, password: PASSWORD }));
      await s.call("get-session while pending", laptop, (c) => c.getSession());
      await s.call("verify-backup-code", laptop, (c) => c.twoFactor.verifyBackupCode({ code: alice.backupCodes[0]! }));
      await s.call("get-session", laptop, (c) => c.getSession());
    },
  },
  {
    name: "two-factor: backup codes work once; new ones replace them",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const [first, second, third] = alice.backupCodes;
      const laptop = await signInPending(s, alice, "laptop");
      await s.call("verify-backup-code", laptop, (c) => c.twoFactor.verifyBackupCode({ code: first! }));
      await s.call("get-session", laptop, (c) => c.getSession());
      const phone = await signInPending(s, alice, "phone");
      await s.call("the used backup code", phone, (c) => c.twoFactor.verifyBackupCode({ code: first! }));
      await s.call("another backup code", phone, (c) => c.twoFactor.verifyBackupCode({ code: second! }));
      await s.call("generate-backup-codes with a wrong password", alice.actor, (c) => c.twoFactor.generateBackupCodes({ password: "not the password" }));
      const fresh = await s.call("generate-backup-codes", alice.actor, (c) => c.twoFactor.generateBackupCodes({ password: PASSWORD }));
      const tablet = await signInPending(s, alice, "tablet");
      await s.call("an old backup code", tablet, (c) => c.twoFactor.verifyBackupCode({ code: third! }));
      const code = s.need(fresh?.backupCodes[0], "a new backup code");
      await s.call("a new backup code", tablet, (c) => c.twoFactor.verifyBackupCode({ code }));
    },
  },
  {
    name: "two-factor: a mailed code (send-otp, verify-otp) completes a sign-in",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const laptop = await signInPending(s, alice, "laptop");
      await s.call("verify-otp before any was sent", laptop, (c) => c.twoFactor.verifyOtp({ code: "123456" }));
      await s.call("send-otp", laptop, (c) => c.twoFactor.sendOtp());
      const code = await s.code("the mailed code", alice.email);
      await s.call("verify-otp with a wrong code", laptop, (c) => c.twoFactor.verifyOtp({ code: otherCode(code) }));
      await s.call("verify-otp", laptop, (c) => c.twoFactor.verifyOtp({ code }));
      await s.call("get-session", laptop, (c) => c.getSession());
      await s.call("send-otp from a browser with no sign-in", s.actor("elsewhere"), (c) => c.twoFactor.sendOtp());
    },
  },
  {
    name: "two-factor: a mailed code to a signed-in user",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("enable", alice.actor, (c) => c.twoFactor.enable({ password: PASSWORD }));
      await s.call("send-otp", alice.actor, (c) => c.twoFactor.sendOtp());
      const code = await s.code("the mailed code", alice.email);
      await s.call("verify-otp with a wrong code", alice.actor, (c) => c.twoFactor.verifyOtp({ code: otherCode(code) }));
      await s.call("verify-otp", alice.actor, (c) => c.twoFactor.verifyOtp({ code }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await signInPending(s, alice, "laptop");
    },
  },
  {
    name: "two-factor: five wrong codes end the pending sign-in",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const laptop = await signInPending(s, alice, "laptop");
      for (let i = 1; i <= 5; i++) {
        const wrong = await wrongTotpCode(alice.secret);
        await s.call(`wrong code ${i}`, laptop, (c) => c.twoFactor.verifyTotp({ code: wrong }));
      }
      const code = await totpCode(alice.secret, 0);
      await s.call("the right code, sixth try", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("the right code, seventh try", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      await signInPending(s, alice, laptop);
      await s.call("the right code in a new sign-in", laptop, (c) => c.twoFactor.verifyTotp({ code }));
      await s.call("get-session", laptop, (c) => c.getSession());
    },
  },
  {
    name: "two-factor: trustDevice skips the second step in that browser",
    async run(s) {
      const alice = await enrolled(s, "alice");
      const laptop = await signInPending(s, alice, "laptop");
      const code = await totpCode(alice.secret, 0);
      await s.call("verify-totp, trusting the device", laptop, (c) => c.twoFactor.verifyTotp({ code, trustDevice: true }));
      await s.call("sign-out", laptop, (c) => c.signOut());
      laptop.token = null;
      await signInPending(s, alice, laptop);
      await s.call("get-session", laptop, (c) => c.getSession());
      await signInPending(s, alice, "phone");
    },
  },
  {
    name: "two-factor: disable, then sign-in has no second step",
    async run(s) {
      const alice = await enrolled(s, "alice");
      await s.call("disable with a wrong password", alice.actor, (c) => c.twoFactor.disable({ password: "not the password" }));
      await s.call("disable", alice.actor, (c) => c.twoFactor.disable({ password: PASSWORD }));
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await signInPending(s, alice, "laptop");
      await s.call("get-totp-uri after disable", alice.actor, (c) => c.twoFactor.getTotpUri({ password: PASSWORD }));
    },
  },
  {
    name: "two-factor: without a session, before enabling",
    async run(s) {
      const nobody = s.actor("nobody");
      await s.call("enable without a session", nobody, (c) => c.twoFactor.enable({ password: PASSWORD }));
      await s.call("verify-totp without a session or pending sign-in", nobody, (c) => c.twoFactor.verifyTotp({ code: "123456" }));
      await s.call("verify-backup-code without either", nobody, (c) => c.twoFactor.verifyBackupCode({ code: "abcde-fghij" }));
      const alice = await signUp(s, "alice");
      await s.call("verify-totp before enabling", alice.actor, (c) => c.twoFactor.verifyTotp({ code: "123456" }));
      await s.call("get-totp-uri before enabling", alice.actor, (c) => c.twoFactor.getTotpUri({ password: PASSWORD }));
      await s.call("generate-backup-codes before enabling", alice.actor, (c) => c.twoFactor.generateBackupCodes({ password: PASSWORD }));
      await s.call("disable before enabling", alice.actor, (c) => c.twoFactor.disable({ password: PASSWORD }));
    },
  },
];
