import type { EntityManager } from "@mikro-orm/core";
import type { Family } from "../../core/index.ts";
import { continueAfterSignIn } from "./consent.ts";
import { verifyQuery } from "./signed-query.ts";
import { OauthAccessToken, OauthCode, OauthConsent, OauthRefreshToken } from "../../db/entities/index.ts";

export { oauth2Router } from "./oidc-provider.router.ts";
export { adminOauth2Router } from "./management.router.ts";
export { oidcProviderDoc } from "./oidc-provider.openapi.ts";
export { serveOidcPage } from "./pages.ts";
export { rootMetadataPath, providerMetadata } from "./metadata.ts";

/** Every token, code and consent of the user: nothing a client holds for them survives. */
async function revokeEverything(tx: EntityManager, userId: string, consents: boolean): Promise<void> {
  await tx.nativeDelete(OauthCode, { user: userId });
  await tx.nativeDelete(OauthRefreshToken, { user: userId });
  await tx.nativeDelete(OauthAccessToken, { user: userId });
  if (consents) await tx.nativeDelete(OauthConsent, { user: userId });
}

/**
 * The OpenID provider in the kernel (docs/oidc-provider.md "What ends a grant"): signing out
 * everywhere (also a ban, and the console's revocation of every session) ends the user's codes,
 * access and refresh tokens and consents; a changed password ends the tokens; a takeover, reset
 * or deletion ends everything (the rows also cascade with the user).
 */
export const oidcProviderFamily: Family = {
  name: "oidc-provider",
  keyUses(app) {
    const c = app.config.oidcProvider;
    if (!c.enabled) return [];
    return [{ alg: c.idTokenSigningAlg, lifetimeSec: c.idTokenExpiresInSec }, { alg: app.config.jwt.alg, lifetimeSec: c.accessTokenExpiresInSec }];
  },
  signInContinuation: {
    check: (app, query) => app.config.oidcProvider.enabled && verifyQuery(app, query) !== null,
    continue: (app, em, token, query) => continueAfterSignIn(app, em, token, query),
  },
  holding: {
    signedOutEverywhere: (_app, tx, userId) => revokeEverything(tx, userId, true),
    passwordChanged: (_app, tx, userId) => revokeEverything(tx, userId, false),
    removed: (_app, tx, userId) => revokeEverything(tx, userId, true),
  },
};
