import type { VerifiedRegistrationResponse } from "@simplewebauthn/server";
import type { App } from "../../app.ts";
import type { IPasskey } from "../../db/entities/index.ts";
import { AuthError, type ErrorCode } from "../../errors.ts";
import { challengeMatcher, type StoredChallenge } from "./passkey.challenge.ts";
import { relyingParty, webauthn } from "./passkey.rules.ts";
import { authenticationResponseSchema, registrationResponseSchema, type AuthenticationResponse } from "./passkey.schema.ts";

/**
 * The two ceremonies' checks (W3C WebAuthn L3 §7.1, §7.2), done by @simplewebauthn/server. Any
 * refusal, whether the JSON is malformed, a check fails or the library throws on bytes it cannot
 * decode, is the ceremony's 400 code; the reason goes to the log, never to the client.
 */
interface Call {
  app: App;
  requestId: string;
}

function refused(call: Call, code: ErrorCode, cause: unknown): AuthError {
  call.app.logger.warn({ requestId: call.requestId, err: cause }, code === "AUTHENTICATION_FAILED" ? "passkey sign-in refused" : "passkey registration refused");
  return new AuthError(code, { cause });
}

export type RegistrationInfo = Extract<VerifiedRegistrationResponse, { verified: true }>["registrationInfo"] & {
  /** What the browser reported (L3 §5.2.1.2 getTransports()): a hint for later allowCredentials. */
  transports: string[] | undefined;
};

export async function verifyRegistration(call: Call, raw: unknown, stored: StoredChallenge): Promise<RegistrationInfo> {
  const parsed = registrationResponseSchema.safeParse(raw);
  if (!parsed.success) throw refused(call, "FAILED_TO_VERIFY_REGISTRATION", parsed.error);
  const rp = relyingParty(call.app);
  let cause: unknown = new Error("registration response not verified");
  try {
    const { verifyRegistrationResponse } = await webauthn();
    const result = await verifyRegistrationResponse({
      // clientExtensionResults: better-auth's client strips them, and no extension is requested.
      response: { ...parsed.data, clientExtensionResults: {} },
      expectedChallenge: challengeMatcher(stored),
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      // better-auth's choice: userVerification is "preferred" in the options, so UV is not required (L3 §7.1 step 17).
      requireUserVerification: false,
    });
    if (result.verified) return { ...result.registrationInfo, transports: parsed.data.response.transports };
  } catch (err) {
    cause = err;
  }
  throw refused(call, "FAILED_TO_VERIFY_REGISTRATION", cause);
}

/** The assertion's credential id, or AUTHENTICATION_FAILED for JSON that is no assertion. */
export function parseAssertion(call: Call, raw: unknown): AuthenticationResponse {
  const parsed = authenticationResponseSchema.safeParse(raw);
  if (!parsed.success) throw refused(call, "AUTHENTICATION_FAILED", parsed.error);
  return parsed.data;
}

export interface AssertionInfo {
  newCounter: number;
  backedUp: boolean;
}

/**
 * L3 §7.2 with the stored public key and signature counter. simplewebauthn refuses a counter
 * that does not grow when either side is non-zero (§7.2 step 21, §6.1.1: a sign of a cloned
 * authenticator).
 */
export async function verifyAssertion(call: Call, response: AuthenticationResponse, passkey: IPasskey, stored: StoredChallenge): Promise<AssertionInfo> {
  const rp = relyingParty(call.app);
  let cause: unknown = new Error("authentication response not verified");
  try {
    const { userHandle, ...assertion } = response.response;
    const { verifyAuthenticationResponse } = await webauthn();
    const result = await verifyAuthenticationResponse({
      response: { ...response, response: { ...assertion, ...(userHandle ? { userHandle } : {}) }, clientExtensionResults: {} },
      expectedChallenge: challengeMatcher(stored),
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, "base64")), counter: passkey.counter },
      requireUserVerification: false,
    });
    if (result.verified) return { newCounter: result.authenticationInfo.newCounter, backedUp: result.authenticationInfo.credentialBackedUp };
  } catch (err) {
    cause = err;
  }
  throw refused(call, "AUTHENTICATION_FAILED", cause);
}
