import type { Family } from "../../core/index.ts";
import { applyChangeEmail, confirmChangeEmail } from "./change-email.service.ts";

export { userDoc } from "./user.openapi.ts";
export { userProcedures } from "./user.router.ts";

/**
 * Account self-service in the kernel: change-email's two mailed links, which GET /verify-email
 * opens (docs/wire-contract.md §9): the approval from the old address mails the new one its
 * link; that link moves the address and answers with the moved user.
 */
export const userFamily: Family = {
  name: "user",
  emailLinks: [
    {
      purpose: "change-email-confirmation",
      async open(app, em, req, token, callbackURL) {
        await confirmChangeEmail(app, em, req, token, callbackURL);
        return {};
      },
    },
    {
      purpose: "change-email-verification",
      async open(app, em, _req, token) {
        return { user: await applyChangeEmail(app, em, token) };
      },
    },
  ],
};
