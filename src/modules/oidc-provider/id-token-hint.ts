import type { App } from "../../app.ts";
import { loadJose, publishedKeys } from "../../core/index.ts";
import { issuerOf } from "./oidc-provider.rules.ts";

export interface HintClaims {
  sub?: unknown;
  aud?: unknown;
  sid?: unknown;
}

/**
 * An `id_token_hint` (OIDC Core §3.1.2.1, RP-Initiated Logout §2): an ID token this issuer
 * signed, expired or not (it only names the user and session). Null when it is not one.
 */
export async function verifyIdTokenHint(app: App, token: string): Promise<HintClaims | null> {
  if (token.length > 8192) return null;
  const jose = await loadJose();
  try {
    const { payload } = await jose.compactVerify(token, jose.createLocalJWKSet(await publishedKeys(app)));
    const claims = JSON.parse(new TextDecoder().decode(payload)) as HintClaims & { iss?: unknown };
    return claims.iss === issuerOf(app.config) ? claims : null;
  } catch {
    return null;
  }
}
