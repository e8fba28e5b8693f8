import { z } from "zod";

/**
 * The records many answers share (docs/wire-contract.md §2), as named components of the OpenAPI document:
 * every schema registered here is written once under `components.schemas` and referenced.
 */
export const components = z.registry<{ id: string; description?: string }>();

const timestamp = z.iso.datetime({ offset: true });

export const userRecord = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  emailVerified: z.boolean(),
  image: z.string().nullable(),
  username: z.string().nullable(),
  displayUsername: z.string().nullable(),
  role: z.string().describe("One role or several, comma-joined"),
  banned: z.boolean(),
  banReason: z.string().nullable(),
  banExpires: timestamp.nullable(),
  twoFactorEnabled: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
components.add(userRecord, { id: "User", description: "A user; emails and usernames lower-cased" });

export const sessionRecord = z.object({
  id: z.string(),
  userId: z.string(),
  expiresAt: timestamp,
  createdAt: timestamp,
  updatedAt: timestamp,
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  impersonatedBy: z.string().nullable().describe("The admin's user id during an impersonation"),
  activeOrganizationId: z.string().nullable().describe("The organization the session works in (docs/organizations.md)"),
  activeTeamId: z.string().nullable().describe("The team the session works in, when teams are on (docs/organizations.md)"),
});
components.add(sessionRecord, { id: "Session" });

export const sessionWithToken = sessionRecord.extend({
  token: z.string().describe("The session token (a credential), or in listings of other sessions an opaque revocation handle"),
});
components.add(sessionWithToken, { id: "SessionWithToken" });

/** get-session's body and what stop-impersonating restores. */
export const sessionAnswer = z.object({ session: sessionWithToken, user: userRecord });
components.add(sessionAnswer, { id: "SessionAndUser" });

export const accountRecord = z.object({
  id: z.string(),
  providerId: z.string(),
  accountId: z.string(),
  userId: z.string(),
  scopes: z.array(z.string()),
  createdAt: timestamp,
  updatedAt: timestamp,
});
components.add(accountRecord, { id: "Account", description: "A linked account; never a token or a password hash" });

export const passkeyRecord = z.object({
  id: z.string(),
  name: z.string().nullable(),
  publicKey: z.string(),
  userId: z.string(),
  credentialID: z.string(),
  counter: z.number(),
  deviceType: z.string(),
  backedUp: z.boolean(),
  transports: z.string().describe("Comma-joined"),
  createdAt: timestamp,
  aaguid: z.string().nullable(),
});
components.add(passkeyRecord, { id: "Passkey" });

/** `{ status: true }`, `{ success: true }`: the acknowledgements better-auth's shapes use. */
export const statusTrue = z.object({ status: z.literal(true) });
export const successTrue = z.object({ success: z.literal(true) });

/** A password, username or social sign-in held for its second factor (better-auth's two-factor shape). */
export const twoFactorRedirect = z.object({ twoFactorRedirect: z.literal(true), twoFactorMethods: z.array(z.string()) });
components.add(twoFactorRedirect, { id: "TwoFactorRedirect", description: "Sign-in needs a second factor: verify it under /two-factor" });

/** `{ redirect: true, url }`: tRPC callers' view of a route the bridge answers with a 302. */
export const redirectAnswer = z.object({ redirect: z.literal(true), url: z.string() });

export const errorBody = z.object({
  code: z.string().describe("The contract's code (src/errors.ts)"),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe("On VALIDATION_ERROR: each bad field"),
  requestId: z.string().optional().describe("On 5xx: also in the server log"),
});
components.add(errorBody, { id: "Error" });

export const oauthErrorBody = z.object({
  error: z.string().describe("RFC 6749 §5.2 / RFC 8628 §3.5 error code"),
  error_description: z.string(),
});
components.add(oauthErrorBody, { id: "OAuthError" });
