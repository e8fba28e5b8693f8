import { z } from "zod";
import { callbackURL, emailAddress } from "../../trpc/schema.ts";

export const token = z.string().min(1, "is required").max(512);

export const sendVerificationEmailInput = z.object({
  email: emailAddress,
  callbackURL,
});

/** GET /verify-email: the query string of the mailed link. */
export const verifyEmailInput = z.object({ token, callbackURL });
