import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { statusTrue, userRecord } from "../../openapi/records.ts";

const deleted = z.object({ success: z.literal(true), message: z.literal("User deleted") });

/** OpenAPI docs of user.router.ts (src/openapi/doc.ts). */
export const userDoc = moduleDoc({
  tag: "Account",
  description: "The signed-in user's own account: profile, password, email, deletion.",
  operations: {
    updateUser: {
      summary: "Update the caller's profile",
      description: "name, image, username, displayUsername; the email changes through change-email only. Re-sends the session cookie the request carried.",
      access: "session",
      output: statusTrue,
      errors: ["EMAIL_CAN_NOT_BE_UPDATED", "NO_FIELDS_TO_UPDATE", "USERNAME_TOO_SHORT", "USERNAME_TOO_LONG", "INVALID_USERNAME", "USERNAME_IS_ALREADY_TAKEN"],
    },
    changePassword: {
      summary: "Change the caller's password",
      description: "With `revokeOtherSessions`, every other session ends and a new session is issued (`token`).",
      access: "own-session",
      output: z.object({ token: z.string().nullable(), user: userRecord }),
      errors: ["PASSWORD_TOO_SHORT", "PASSWORD_TOO_LONG", "CREDENTIAL_ACCOUNT_NOT_FOUND", "INVALID_PASSWORD"],
    },
    verifyPassword: {
      summary: "Check the caller's password",
      access: "session",
      output: statusTrue,
      errors: ["INVALID_PASSWORD"],
    },
    changeEmail: {
      summary: "Change the caller's email",
      description:
        "Unverified users: the email changes now and a verification mail goes to the new address. Verified users: a confirmation mail to the " +
        "old address first. A taken address answers like a free one. Off unless `user.changeEmail.enabled`.",
      access: "own-session",
      output: statusTrue,
      errors: ["CHANGE_EMAIL_DISABLED", "INVALID_EMAIL", "EMAIL_IS_THE_SAME", "INVALID_CALLBACK_URL"],
    },
    deleteUser: {
      summary: "Delete the caller's account",
      description:
        "A fresh session (`session.freshAgeSec`) or the right `password` deletes at once; otherwise a confirmation link is mailed. " +
        "Off (404) unless `user.deleteUser.enabled`.",
      access: "own-session",
      output: z.union([deleted, z.object({ success: z.literal(true), message: z.literal("Verification email sent") })]),
      errors: ["NOT_FOUND", "CREDENTIAL_ACCOUNT_NOT_FOUND", "INVALID_PASSWORD", "INVALID_TOKEN", "INVALID_CALLBACK_URL"],
    },
    deleteUserCallback: {
      summary: "The mailed account-deletion link",
      description: "Deletes the account (single-use token); 302 to `callbackURL` when given. Off (404) unless `user.deleteUser.enabled`.",
      access: "own-session",
      output: deleted,
      redirect: "with-callback",
      errors: ["NOT_FOUND", "INVALID_TOKEN", "INVALID_CALLBACK_URL"],
    },
  },
});
