import type { ErrorTable } from "../../error-table.ts";

/**
 * Magic links (better-auth's magic-link plugin). Its failures are mostly redirects with
 * `?error=<code>`; these are its codes that the kernel does not have. Codes are part of the wire
 * contract: add new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const magicLinkErrors = {
  // 403
  NEW_USER_SIGNUP_DISABLED: [403, "Sign-up is disabled: the link's address has no account"],
} as const satisfies ErrorTable;
