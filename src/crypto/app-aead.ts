import type { App } from "../app.ts";
import { createAead, keyringFromSecrets, type Aead } from "./aead.ts";

/**
 * THE cipher that seals secrets at rest (provider tokens, TOTP secrets): one key per configured
 * secret (HKDF), the newest seals, all open (crypto/aead.ts). Built on first use per instance and
 * kept beside it (a WeakMap keyed by the App): nothing module-wide is shared between instances.
 */
const ciphers = new WeakMap<App, Aead>();

export function appAead(app: App): Aead {
  let aead = ciphers.get(app);
  if (!aead) {
    aead = createAead(keyringFromSecrets(app.secrets));
    ciphers.set(app, aead);
  }
  return aead;
}
