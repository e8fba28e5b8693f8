import { z } from "zod";

/** Booleans also arrive form-encoded ("true"/"false"). */
export const formBoolean = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);

export const password = z.string().min(1, "is required").max(4096, "is too long");
export const callbackURL = z.string().max(2048).optional();
