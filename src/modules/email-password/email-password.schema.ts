import { z } from "zod";
import { callbackURL, formBoolean, password, userImage } from "../../trpc/schema.ts";

export const signUpEmailInput = z.object({
  name: z.string().max(1024),
  email: z.string().min(1, "is required").max(1024),
  password,
  username: z.string().max(256).optional(),
  displayUsername: z.string().max(256).optional(),
  image: userImage,
  callbackURL,
  rememberMe: formBoolean.optional(),
});

export const signInEmailInput = z.object({
  email: z.string().min(1, "is required").max(1024),
  password,
  callbackURL,
  rememberMe: formBoolean.optional(),
});

export const signInUsernameInput = z.object({
  username: z.string().min(1, "is required").max(1024),
  password,
  callbackURL,
  rememberMe: formBoolean.optional(),
});

export const usernameInput = z.object({ username: z.string().max(1024) });
