import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { redirectAnswer, sessionWithToken, statusTrue, twoFactorRedirect, userRecord } from "../../openapi/records.ts";

const switchable = true;
const signedIn = z.object({ token: z.string(), user: userRecord, session: sessionWithToken });
const verifyOutput = z.union([signedIn, twoFactorRedirect, redirectAnswer]);
const verifyErrors = ["INVALID_TOKEN", "NEW_USER_SIGNUP_DISABLED", "BANNED_USER"] as const;

/** OpenAPI docs of magic-link.router.ts (src/openapi/doc.ts): better-auth's magic-link plugin shapes. */
export const magicLinkDoc = moduleDoc({
  tag: "Magic links",
  description:
    "Sign in with a link mailed to the address (docs/passwordless.md): 32 random bytes, stored as SHA-256, used once, " +
    "valid `magicLink.expiresIn` seconds (300). Off (404) unless `magicLink.enabled`.",
  operations: {
    "signIn.magicLink": {
      summary: "Mail a sign-in link",
      description:
        "`{ status: true }` whether or not the address has an account, in the same time; the link goes out after the answer " +
        "(to an address without an account only when sign-up is allowed). The link is `{base}/magic-link/verify?token=…` with the callback URLs given.",
      access: "sign-in",
      switchable,
      output: statusTrue,
      errors: ["INVALID_CALLBACK_URL"],
    },
    "magicLink.verify": {
      summary: "Open a magic link",
      description:
        "A program (the client SDK) signs in: `{ token, user, session }` and the session cookie, or with a `callbackURL` a 302 there " +
        "(`newUserCallbackURL` for a new account); `twoFactorRedirect` for a user with two-factor on. " +
        "A browser (Accept prefers text/html) gets a confirm page whose button POSTs the token, so a mail scanner's fetch does not use it up " +
        "(`magicLink.confirmPage: false`: signs in on the GET). A failure with a callback goes to `errorCallbackURL` (else `callbackURL`) with `?error=CODE`.",
      access: "sign-in",
      switchable,
      redirect: "with-callback",
      output: z.union([verifyOutput, z.object({ confirm: z.literal(true) }).describe("The confirm page was sent (HTML, REST only)")]),
      errors: [...verifyErrors, "INVALID_CALLBACK_URL"],
    },
    "magicLink.confirm": {
      summary: "Sign in with a magic link (the confirm page's form)",
      description: "The same as a program's GET: form-encoded or JSON.",
      access: "sign-in",
      switchable,
      redirect: "with-callback",
      output: verifyOutput,
      errors: [...verifyErrors, "INVALID_CALLBACK_URL"],
    },
  },
});
