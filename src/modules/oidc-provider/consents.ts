import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { OauthAccessToken, OauthConsent, OauthRefreshToken, type IOauthConsent } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError, OAuthError } from "../../errors.ts";
import { isUuid, recordAudit, type Actor } from "../../core/index.ts";
import { allowedScopes, findClient } from "./clients.ts";

/**
 * A user's consents (@better-auth/oauth-provider's /oauth2/*-consent): listed, narrowed, revoked.
 * Revoking a consent ends the client's tokens for the user too (docs/oidc-provider.md "What ends a grant").
 */

const view = (c: IOauthConsent) => ({
  id: c.id,
  clientId: c.clientId,
  userId: c.user.id,
  scopes: JSON.parse(c.scopes) as string[],
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

async function own(em: EntityManager, userId: string, id: string): Promise<IOauthConsent> {
  const row = isUuid(id) ? await em.findOne(OauthConsent, { id, user: userId }, { disableIdentityMap: true }) : null;
  if (!row) throw new AuthError("OAUTH_CONSENT_NOT_FOUND");
  return row;
}

export const getConsent = async (em: EntityManager, userId: string, id: string) => view(await own(em, userId, id));

export async function listConsents(em: EntityManager, userId: string) {
  return (await em.find(OauthConsent, { user: userId }, { orderBy: { createdAt: "asc" }, disableIdentityMap: true })).map(view);
}

export async function updateConsent(app: App, em: EntityManager, userId: string, input: { id: string; update: { scopes: string[] } }) {
  const row = await own(em, userId, input.id);
  const client = await findClient(em, row.clientId);
  const allowed = client ? allowedScopes(app, client) : [];
  if (input.update.scopes.some((s) => !allowed.includes(s))) throw new OAuthError("INVALID_SCOPE", "scope not allowed for this client", "invalid_scope");
  await em.nativeUpdate(OauthConsent, { id: row.id }, { scopes: JSON.stringify([...new Set(input.update.scopes)]), updatedAt: app.clock.now() });
  return getConsent(em, userId, row.id);
}

export async function deleteConsent(app: App, em: EntityManager, actor: Actor & { userId: string }, id: string) {
  const userId = actor.userId;
  const row = await own(em, userId, id);
  await inTransaction(em, async (tx) => {
    await tx.nativeDelete(OauthConsent, { id: row.id });
    await recordAudit(tx, app.clock, actor, { action: "oauth-consent-revoked", targetType: "user", targetId: userId, metadata: { clientId: row.clientId } });
    await tx.nativeDelete(OauthRefreshToken, { clientId: row.clientId, user: userId });
    await tx.nativeDelete(OauthAccessToken, { clientId: row.clientId, user: userId });
  });
  return null; // better-auth answers null
}

/** The console's view of one client (`oauthClient` list permission): who allowed it, what, and when. */
export async function adminClientConsents(em: EntityManager, clientId: string) {
  const rows = await em.find(OauthConsent, { clientId }, { populate: ["user"], orderBy: { createdAt: "desc" }, limit: 200, disableIdentityMap: true });
  return rows.map((c) => ({ ...view(c), userEmail: c.user.getEntity().email }));
}
