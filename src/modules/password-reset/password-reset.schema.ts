import { z } from "zod";
import { callbackURL, password, token } from "../../trpc/schema.ts";

export const requestPasswordResetInput = z.object({
  email: z.string().min(1, "is required").max(1024),
  /** Where the mailed link lands (with `?token=`); relative or a trusted origin. */
  redirectTo: callbackURL,
});

/** GET /reset-password/:token?callbackURL=...: the mailed link. */
export const resetPasswordCallbackInput = z.object({ token, callbackURL });

export const resetPasswordInput = z.object({ token, newPassword: password });
