import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { statusTrue, userRecord } from "../../openapi/records.ts";

/** OpenAPI docs of verification.router.ts (src/openapi/doc.ts). */
export const verificationDoc = moduleDoc({
  tag: "Email verification",
  description: "Verification mails and their links; the links of change-email too.",
  operations: {
    sendVerificationEmail: {
      summary: "Send a verification mail",
      description: "Answers the same whether or not the address is known (no enumeration). A signed-in caller may only ask for their own address.",
      access: "optional",
      output: statusTrue,
      errors: ["INVALID_EMAIL", "EMAIL_MISMATCH", "EMAIL_ALREADY_VERIFIED", "INVALID_CALLBACK_URL"],
    },
    verifyEmail: {
      summary: "The mailed verification link",
      description:
        "Uses the token up. With `callbackURL`: 302 there (with `?error=INVALID_TOKEN` for a bad token). Without: `{ status: true, user }` " +
        "(`user` null for a verified address, the moved user once a change of email is done, absent for its approval step) or 400 INVALID_TOKEN. " +
        "A change-email proof opened in the user's own session re-sends its cookie.",
      access: "public",
      output: z.object({ status: z.boolean(), url: z.string().optional(), user: userRecord.nullable().optional() }),
      redirect: "with-callback",
      errors: ["INVALID_TOKEN", "INVALID_CALLBACK_URL"],
    },
  },
});
