import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { passkeyRecord, sessionWithToken, statusTrue, userRecord } from "../../openapi/records.ts";

/** W3C WebAuthn L3 §5.4 / §5.5 options JSON, as @simplewebauthn/server makes them: the fields a client reads, others allowed. */
const descriptor = z.object({ id: z.string(), type: z.string(), transports: z.array(z.string()).optional() });
const common = {
  challenge: z.string(),
  timeout: z.number().optional(),
  hints: z.array(z.string()).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
};
const registrationOptions = z.looseObject({
  ...common,
  rp: z.object({ name: z.string(), id: z.string().optional() }),
  user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.object({ type: z.literal("public-key"), alg: z.number() })),
  excludeCredentials: z.array(descriptor).optional(),
  authenticatorSelection: z.record(z.string(), z.unknown()).optional(),
  attestation: z.string().optional(),
  attestationFormats: z.array(z.string()).optional(),
});
const authenticationOptions = z.looseObject({
  ...common,
  rpId: z.string().optional(),
  allowCredentials: z.array(descriptor).optional(),
  userVerification: z.string().optional(),
});
const switchable = true;

/** OpenAPI docs of passkey.router.ts (src/openapi/doc.ts): better-auth's passkey plugin shapes. */
export const passkeyDoc = moduleDoc({
  tag: "Passkeys",
  description: "WebAuthn registration and sign-in. Registering needs the user's own, fresh session. Off (404) unless `passkey.enabled`.",
  operations: {
    "passkey.generateRegisterOptions": {
      summary: "Options for navigator.credentials.create()",
      description: "Sets the challenge cookie.",
      access: "own-session",
      switchable,
      output: registrationOptions,
      errors: ["SESSION_NOT_FRESH"],
    },
    "passkey.verifyRegistration": {
      summary: "Store a new passkey",
      access: "own-session",
      switchable,
      output: passkeyRecord,
      errors: ["SESSION_NOT_FRESH", "CHALLENGE_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY", "FAILED_TO_VERIFY_REGISTRATION"],
    },
    "passkey.generateAuthenticateOptions": {
      summary: "Options for navigator.credentials.get()",
      description: "No session needed; with one, that user's passkeys are allowed. Sets the challenge cookie.",
      access: "optional",
      switchable,
      output: authenticationOptions,
    },
    "passkey.verifyAuthentication": {
      summary: "Sign in with a passkey",
      access: "public",
      switchable,
      output: z.object({ session: sessionWithToken, user: userRecord }),
      errors: ["CHALLENGE_NOT_FOUND", "AUTHENTICATION_FAILED", "PASSKEY_NOT_FOUND", "BANNED_USER"],
    },
    "passkey.listUserPasskeys": { summary: "The caller's passkeys", access: "session", switchable, output: z.array(passkeyRecord) },
    "passkey.deletePasskey": { summary: "Delete a passkey", access: "own-session", switchable, output: statusTrue, errors: ["PASSKEY_NOT_FOUND"] },
    "passkey.updatePasskey": {
      summary: "Rename a passkey",
      access: "own-session",
      switchable,
      output: z.object({ passkey: passkeyRecord }),
      errors: ["PASSKEY_NOT_FOUND"],
    },
  },
});
