import { z } from "zod";
import { IMAGE_URL_MAX_LENGTH, isSafeImageUrl } from "../security/image-url.ts";

/** Booleans also arrive form-encoded ("true"/"false"). */
export const formBoolean = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);

export const password = z.string().min(1, "is required").max(4096, "is too long");
export const callbackURL = z.string().max(2048).optional();

/** A mailed link's token (verification, reset, change-email, delete-account). */
export const token = z.string().min(1, "is required").max(512);

const emailFormat = z.email();
/**
 * An email field that better-auth validates in its body schema (send-verification-email,
 * change-email): a malformed address is 400 VALIDATION_ERROR naming the field, as there.
 * Sign-up and sign-in answer INVALID_EMAIL instead (docs/wire-contract.md §4, core/identity.ts).
 */
export const emailAddress = z
  .string()
  .min(1, "is required")
  .max(320, "is too long")
  .refine((v) => emailFormat.safeParse(v.normalize("NFKC").trim().toLowerCase()).success, "Invalid email address");

/** A user's `image` (sign-up, update-user, admin create/update-user): absolute http(s) URL or null. */
export const userImage = z
  .string()
  .max(IMAGE_URL_MAX_LENGTH, "is too long")
  .refine(isSafeImageUrl, "must be an absolute http(s) URL")
  .nullable()
  .optional();
