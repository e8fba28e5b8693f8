/**
 * Passkeys (docs/wire-contract.md §10): better-auth's passkey plugin endpoints through
 * passkeyClient and `$fetch`, up to the shapes. A WebAuthn ceremony needs an authenticator
 * (navigator.credentials): the browser test covers it (test/browser/passkey.test.ts).
 */
import type { Scenario } from "../runner.ts";
import { signUp } from "./helpers.ts";

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

/** A credential id no server has registered (16 bytes, base64url). */
const UNKNOWN_CREDENTIAL = b64url(Buffer.alloc(16, 7));

/** What a browser would send for `type` (webauthn.create / webauthn.get) on `origin`, with a made-up challenge. */
const clientData = (type: string, origin: string) => b64url(JSON.stringify({ type, challenge: b64url("not the challenge"), origin, crossOrigin: false }));

/**
 * Well-formed RegistrationResponseJSON (W3C WebAuthn L3 §5.1) carrying junk: the attestation
 * object is no CBOR. As passkeyClient sends it (clientExtensionResults left out).
 */
function junkRegistration(origin: string) {
  return {
    id: UNKNOWN_CREDENTIAL,
    rawId: UNKNOWN_CREDENTIAL,
    type: "public-key",
    authenticatorAttachment: "platform",
    response: { clientDataJSON: clientData("webauthn.create", origin), attestationObject: b64url("not an attestation object"), transports: ["internal"] },
  };
}

/** Well-formed AuthenticationResponseJSON for a credential nobody registered. */
function junkAssertion(origin: string) {
  return {
    id: UNKNOWN_CREDENTIAL,
    rawId: UNKNOWN_CREDENTIAL,
    type: "public-key",
    authenticatorAttachment: "platform",
    response: {
      clientDataJSON: clientData("webauthn.get", origin),
      authenticatorData: b64url(Buffer.alloc(37, 1)),
      signature: b64url(Buffer.alloc(64, 2)),
      userHandle: b64url("someone"),
    },
  };
}

export const passkey: Scenario[] = [
  {
    name: "passkey: registration options, an empty list",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("generate-register-options", alice.actor, (c) => c.$fetch("/passkey/generate-register-options", { method: "GET" }));
      await s.call("generate-register-options for a named platform authenticator", alice.actor, (c) =>
        c.$fetch("/passkey/generate-register-options", { method: "GET", query: { authenticatorAttachment: "platform", name: "Alice's laptop" } }),
      );
      await s.call("list-user-passkeys", alice.actor, (c) => c.passkey.listUserPasskeys());
      const nobody = s.actor("nobody");
      await s.call("generate-register-options without a session", nobody, (c) => c.$fetch("/passkey/generate-register-options", { method: "GET" }));
      await s.call("list-user-passkeys without a session", nobody, (c) => c.passkey.listUserPasskeys());
    },
  },
  {
    name: "passkey: authentication options, with and without a session",
    async run(s) {
      await s.call("generate-authenticate-options without a session", s.actor("nobody"), (c) => c.$fetch("/passkey/generate-authenticate-options", { method: "GET" }));
      const alice = await signUp(s, "alice");
      await s.call("generate-authenticate-options signed in", alice.actor, (c) => c.$fetch("/passkey/generate-authenticate-options", { method: "GET" }));
    },
  },
  {
    name: "passkey: verify-authentication of an unknown credential, and without a challenge",
    async run(s) {
      const browser = s.actor("browser");
      const response = junkAssertion(s.target.origin);
      await s.call("verify-authentication without a challenge", browser, (c) => c.$fetch("/passkey/verify-authentication", { method: "POST", body: { response } }));
      await s.call("generate-authenticate-options", browser, (c) => c.$fetch("/passkey/generate-authenticate-options", { method: "GET" }));
      await s.call("verify-authentication of an unknown credential", browser, (c) => c.$fetch("/passkey/verify-authentication", { method: "POST", body: { response } }));
      await s.call("the used challenge again", browser, (c) => c.$fetch("/passkey/verify-authentication", { method: "POST", body: { response } }));
      await s.call("get-session", browser, (c) => c.getSession());
    },
  },
  {
    name: "passkey: verify-registration of a junk response, and without a challenge",
    async run(s) {
      const alice = await signUp(s, "alice");
      const response = junkRegistration(s.target.origin);
      await s.call("verify-registration without a challenge", alice.actor, (c) => c.$fetch("/passkey/verify-registration", { method: "POST", body: { response } }));
      await s.call("generate-register-options", alice.actor, (c) => c.$fetch("/passkey/generate-register-options", { method: "GET" }));
      await s.call("verify-registration of a junk response", alice.actor, (c) => c.$fetch("/passkey/verify-registration", { method: "POST", body: { response, name: "junk" } }));
      await s.call("list-user-passkeys", alice.actor, (c) => c.passkey.listUserPasskeys());
    },
  },
  {
    name: "passkey: delete and rename an unknown passkey",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("delete-passkey of an unknown id", alice.actor, (c) => c.passkey.deletePasskey({ id: "no-such-passkey" }));
      await s.call("update-passkey of an unknown id", alice.actor, (c) => c.passkey.updatePasskey({ id: "no-such-passkey", name: "renamed" }));
      await s.call("delete-passkey without a session", s.actor("nobody"), (c) => c.passkey.deletePasskey({ id: "no-such-passkey" }));
    },
  },
];
