import { z } from "zod";

/**
 * Inputs of better-auth 1.6's passkey plugin. The WebAuthn `response` objects are checked in two
 * steps: here only that they are JSON objects (as better-auth does), in the service against the
 * JSON shapes of W3C WebAuthn L3 §5.1 (RegistrationResponseJSON, AuthenticationResponseJSON), so
 * a malformed credential answers the ceremony's own code (FAILED_TO_VERIFY_REGISTRATION,
 * AUTHENTICATION_FAILED), not a validation error.
 */
const credentialObject = z.record(z.string(), z.unknown());

const passkeyName = z.string().trim().max(255, "is too long");

/** Query of GET /passkey/generate-register-options. */
export const registerOptionsInput = z
  .object({
    authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
    /** The user name the authenticator shows (better-auth: the passkey's name). */
    name: z.string().max(255, "is too long").optional(),
    /** better-auth's passkey-first registration context; kept for the wire, unused without resolveUser. */
    context: z.string().max(1024, "is too long").optional(),
  })
  .optional();

/** GET query or POST body of /passkey/generate-authenticate-options: nothing is read from it. */
export const authenticateOptionsInput = z.object({}).optional();

export const verifyRegistrationInput = z.object({
  response: credentialObject,
  name: passkeyName.optional(),
});

export const verifyAuthenticationInput = z.object({ response: credentialObject });

export const deletePasskeyInput = z.object({ id: z.string().max(255, "is too long") });

export const updatePasskeyInput = z.object({
  id: z.string().max(255, "is too long"),
  name: passkeyName.min(1, "is required"),
});

// --- the credential JSON (W3C WebAuthn L3 §5.1.3, §5.1.4; @simplewebauthn/types) -------------

/** base64url without padding, as navigator.credentials returns it through toJSON(). */
const base64url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/);

/** L3 §5.8.3 caps a credential id at 1023 bytes: 1364 base64url characters. */
const credentialId = base64url(1400);

const credentialEnvelope = {
  id: credentialId,
  rawId: credentialId,
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
};

export const registrationResponseSchema = z.object({
  ...credentialEnvelope,
  response: z.object({
    clientDataJSON: base64url(8192),
    attestationObject: base64url(40_000),
    authenticatorData: base64url(40_000).optional(),
    transports: z.array(z.string().max(32)).max(16).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url(8192).optional(),
  }),
});

export const authenticationResponseSchema = z.object({
  ...credentialEnvelope,
  response: z.object({
    clientDataJSON: base64url(8192),
    authenticatorData: base64url(40_000),
    signature: base64url(2048),
    // null when the authenticator returns none (non-discoverable credential).
    userHandle: base64url(512).nullish(),
  }),
});

export type RegistrationResponse = z.output<typeof registrationResponseSchema>;
export type AuthenticationResponse = z.output<typeof authenticationResponseSchema>;
