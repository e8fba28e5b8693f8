import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { statusTrue } from "../../openapi/records.ts";

/** OpenAPI docs of password-reset.router.ts (src/openapi/doc.ts). */
export const passwordResetDoc = moduleDoc({
  tag: "Password reset",
  description: "Reset links by mail.",
  operations: {
    requestPasswordReset: {
      summary: "Mail a password reset link",
      description: "Answers the same whether or not the address is known.",
      access: "public",
      output: z.object({ status: z.literal(true), message: z.string() }),
      errors: ["INVALID_EMAIL", "INVALID_CALLBACK_URL"],
    },
    resetPasswordCallback: {
      summary: "The mailed reset link",
      description: "With `callbackURL`: 302 to `callbackURL?token=…` (or `?error=INVALID_TOKEN`). Without: whether the token is good. Does not use the token up.",
      access: "public",
      output: z.object({ status: z.boolean(), url: z.string().optional() }),
      redirect: "with-callback",
      errors: ["INVALID_TOKEN", "INVALID_CALLBACK_URL"],
    },
    resetPassword: {
      summary: "Set a new password with a reset token",
      description: "Every session of the user ends.",
      access: "public",
      output: statusTrue,
      errors: ["PASSWORD_TOO_SHORT", "PASSWORD_TOO_LONG", "INVALID_TOKEN"],
    },
  },
});
