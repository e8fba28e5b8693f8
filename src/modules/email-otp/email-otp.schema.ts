import { z } from "zod";
import { userImage } from "../../trpc/schema.ts";

/** better-auth's types but `change-email` (its change-email routes are not served: docs/passwordless.md). */
export const otpType = z.enum(["sign-in", "email-verification", "forget-password"]);

/** Format checked by the service (400 INVALID_EMAIL, as better-auth), length here. */
const email = z.string().min(1, "is required").max(1024);
const otp = z.string().min(1, "is required").max(64);

export const sendInput = z.object({ email, type: otpType });
export const emailInput = z.object({ email });
export const checkInput = z.object({ email, type: otpType, otp });
export const verifyEmailInput = z.object({ email, otp });
export const signInInput = z.object({
  email,
  otp,
  /** A first sign-in creates the account with these. */
  name: z.string().max(1024).optional(),
  image: userImage,
});
export const resetPasswordInput = z.object({ email, otp, password: z.string().min(1, "is required").max(4096, "is too long") });
