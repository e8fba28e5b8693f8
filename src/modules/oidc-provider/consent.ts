import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { OauthConsent } from "../../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { AuthError, OAuthError } from "../../errors.ts";
import { recordAudit, resolveSession, type Actor, type ResolvedSession } from "../../core/index.ts";
import { authorize, boundToSession, errorUrl, validateClientAndRedirect } from "./authorize.ts";
import { parseScopes } from "./oidc-provider.rules.ts";
import { verifyQuery } from "./signed-query.ts";

/** What the user allowed a client: one row per user and client (a unique index), replaced on each decision. */
export async function recordConsent(app: App, em: EntityManager, userId: string, clientId: string, scopes: string[]): Promise<void> {
  const now = app.clock.now();
  const update = () => em.nativeUpdate(OauthConsent, { clientId, user: userId }, { scopes: JSON.stringify(scopes), updatedAt: now });
  if ((await update()) > 0) return;
  try {
    await em.insert(OauthConsent, { id: randomUUID(), clientId, user: userId as never, scopes: JSON.stringify(scopes), referenceId: null, createdAt: now, updatedAt: now });
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    await update(); // a concurrent decision inserted it first
  }
}

/**
 * POST /oauth2/consent: the user's answer to the consent page, for the signed request shown to
 * this very session. Allowing records the consent (possibly fewer scopes than asked) and goes on
 * to the code; denying sends the client RFC 6749 §4.1.2.1 access_denied.
 */
export async function decideConsent(app: App, em: EntityManager, auth: ResolvedSession, actor: Actor, input: { accept: boolean; scope?: string | undefined; oauth_query: string }) {
  const signed = verifyQuery(app, input.oauth_query);
  if (!boundToSession(signed.sessionDigest, auth.session.id)) throw new AuthError("OAUTH_QUERY_OF_ANOTHER_SESSION");
  const req = await validateClientAndRedirect(app, em, signed.params);
  if (!input.accept) return { redirect: true as const, url: errorUrl(app, req, "access_denied", "The user denied access") };
  const requested = parseScopes(signed.params.scope);
  const chosen = input.scope !== undefined ? parseScopes(input.scope) : requested;
  if (chosen.length === 0 || chosen.some((s) => !requested.includes(s))) throw new OAuthError("INVALID_SCOPE", "scope must be a subset of the requested scopes", "invalid_scope");
  await recordConsent(app, em, auth.user.id, req.client.clientId, chosen);
  await recordAudit(em, app.clock, actor, { action: "oauth-consent", targetType: "user", targetId: auth.user.id, metadata: { clientId: req.client.clientId, scopes: chosen } });
  const params = { ...signed.params, scope: chosen.join(" ") };
  const url = await authorize(app, em, params, { session: auth, signedAt: signed.issuedAt, consented: true });
  return { redirect: true as const, url };
}

/**
 * A sign-in that carried `oauth_query` (better-auth's oauth-provider `after` hook): the session it
 * just issued goes on with the authorize request, as /oauth2/continue would.
 */
export async function continueAfterSignIn(app: App, em: EntityManager, sessionToken: string, query: string) {
  const signed = verifyQuery(app, query);
  const session = await resolveSession(app, sessionToken);
  if (!session) throw new AuthError("UNAUTHORIZED");
  const url = await authorize(app, em, signed.params, { session, signedAt: signed.issuedAt });
  return { redirect: true as const, url };
}

/** POST /oauth2/continue: the sign-in page's way back once the user is signed in. */
export async function continueAuthorize(app: App, em: EntityManager, auth: ResolvedSession, input: { oauth_query: string }) {
  const signed = verifyQuery(app, input.oauth_query);
  const url = await authorize(app, em, signed.params, { session: auth, signedAt: signed.issuedAt });
  return { redirect: true as const, url };
}
