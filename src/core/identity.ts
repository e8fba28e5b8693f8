import { z } from "zod";
import type { ResolvedConfig } from "../config/index.ts";
import { AuthError } from "../errors.ts";

const emailFormat = z.email();

/** Emails are stored and compared lower-cased (docs/wire-contract.md §2). */
export function normalizeEmail(raw: string): string {
  return raw.normalize("NFKC").trim().toLowerCase();
}

export function parseEmail(raw: string): string {
  const email = normalizeEmail(raw);
  if (email.length > 320 || !emailFormat.safeParse(email).success) throw new AuthError("INVALID_EMAIL");
  return email;
}

export function checkPasswordLength(config: ResolvedConfig, password: string): void {
  const length = [...password.normalize("NFKC")].length;
  if (length < config.emailAndPassword.passwordMinLength) throw new AuthError("PASSWORD_TOO_SHORT");
  if (length > config.emailAndPassword.passwordMaxLength) throw new AuthError("PASSWORD_TOO_LONG");
}

const USERNAME_PATTERN = /^[a-zA-Z0-9_.]+$/;

/** Sign-up rules for usernames; returns the stored (lower-cased) form. */
export function parseUsername(raw: string): string {
  if (raw.length < 3) throw new AuthError("USERNAME_TOO_SHORT");
  if (raw.length > 30) throw new AuthError("USERNAME_TOO_LONG");
  if (!USERNAME_PATTERN.test(raw)) throw new AuthError("INVALID_USERNAME");
  return raw.toLowerCase();
}

export function isValidUsername(raw: string): boolean {
  return raw.length >= 3 && raw.length <= 30 && USERNAME_PATTERN.test(raw);
}
