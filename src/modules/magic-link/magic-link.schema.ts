import { z } from "zod";
import { callbackURL, emailAddress, token } from "../../trpc/schema.ts";

/** POST /sign-in/magic-link (better-auth's body; `email` malformed: 400 VALIDATION_ERROR, as there). */
export const sendInput = z.object({
  email: emailAddress,
  /** A first sign-in creates the account with this name. */
  name: z.string().max(1024).optional(),
  callbackURL,
  newUserCallbackURL: callbackURL,
  errorCallbackURL: callbackURL,
  /** Handed to `email.templates.magicLink` and `email.send` (better-auth's sendMagicLink argument); at most 32 keys. */
  metadata: z
    .record(z.string().max(128), z.unknown())
    .refine((m) => Object.keys(m).length <= 32, "has more than 32 keys")
    .optional(),
});

/** GET /magic-link/verify's query, and the confirm page's form (POST, form-encoded). */
export const verifyInput = z.object({
  token,
  callbackURL,
  newUserCallbackURL: callbackURL,
  errorCallbackURL: callbackURL,
});
