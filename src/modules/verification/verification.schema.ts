import { z } from "zod";
import { callbackURL, emailAddress, token } from "../../trpc/schema.ts";

export const sendVerificationEmailInput = z.object({
  email: emailAddress,
  callbackURL,
});

/** GET /verify-email: the query string of the mailed link. */
export const verifyEmailInput = z.object({ token, callbackURL });
