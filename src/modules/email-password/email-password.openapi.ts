import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { twoFactorRedirect, userRecord } from "../../openapi/records.ts";

const signedIn = z.object({ redirect: z.boolean(), token: z.string().nullable(), url: z.string().nullable(), user: userRecord });

/** OpenAPI docs of email-password.router.ts (src/openapi/doc.ts). */
export const emailPasswordDoc = moduleDoc({
  tag: "Email and password",
  description: "Sign-up and sign-in with an email (or a username) and a password.",
  operations: {
    "signUp.email": {
      summary: "Sign up with email and password",
      description:
        "Creates the user and, unless email verification is required, a session: `token`, the session cookie and `set-auth-token`. " +
        "With `emailAndPassword.requireEmailVerification`, `token` is null and a verification mail goes out.",
      access: "public",
      output: z.object({ token: z.string().nullable(), user: userRecord }),
      errors: [
        "INVALID_EMAIL",
        "PASSWORD_TOO_SHORT",
        "PASSWORD_TOO_LONG",
        "USERNAME_TOO_SHORT",
        "USERNAME_TOO_LONG",
        "INVALID_USERNAME",
        "INVALID_CALLBACK_URL",
        "EMAIL_PASSWORD_SIGN_UP_DISABLED",
        "USER_ALREADY_EXISTS",
        "USERNAME_IS_ALREADY_TAKEN",
      ],
    },
    "signIn.email": {
      summary: "Sign in with email and password",
      description: "A session (`token`, cookie, `set-auth-token`), or `twoFactorRedirect` when the user has two-factor on and this device is not trusted.",
      access: "public",
      output: z.union([signedIn, twoFactorRedirect]),
      errors: ["INVALID_EMAIL", "INVALID_CALLBACK_URL", "INVALID_EMAIL_OR_PASSWORD", "EMAIL_NOT_VERIFIED", "BANNED_USER"],
    },
    "signIn.username": {
      summary: "Sign in with username and password",
      access: "public",
      output: z.union([signedIn, twoFactorRedirect]),
      errors: ["INVALID_CALLBACK_URL", "INVALID_USERNAME_OR_PASSWORD", "EMAIL_NOT_VERIFIED", "BANNED_USER"],
    },
    isUsernameAvailable: {
      summary: "Is a username free",
      access: "public",
      output: z.object({ available: z.boolean() }),
      errors: ["USERNAME_TOO_SHORT", "USERNAME_TOO_LONG", "INVALID_USERNAME"],
    },
  },
});
