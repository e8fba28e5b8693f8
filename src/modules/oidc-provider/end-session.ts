import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { OAuthError } from "../../errors.ts";
import { endSession } from "../../core/index.ts";
import { findClient } from "./clients.ts";
import { verifyIdTokenHint } from "./id-token-hint.ts";

export interface EndSessionInput {
  id_token_hint?: string | undefined;
  client_id?: string | undefined;
  post_logout_redirect_uri?: string | undefined;
  state?: string | undefined;
}

const invalid = (description: string) => new OAuthError("INVALID_REQUEST", description, "invalid_request");

/**
 * GET /oauth2/end-session (OpenID Connect RP-Initiated Logout 1.0 §2-3): an ID token we signed
 * (an expired one is fine: it only names the session) ends the session it names, and the browser
 * goes to a post-logout URI registered for that client, with `state`. The hint is required, so a
 * third-party page cannot sign anyone out by a link.
 */
export async function endSessionRequest(app: App, em: EntityManager, input: EndSessionInput): Promise<string | null> {
  if (!input.id_token_hint) throw invalid("id_token_hint is required");
  const claims = await verifyIdTokenHint(app, input.id_token_hint);
  if (!claims) throw invalid("id_token_hint is not an ID token of this issuer");
  const audiences = typeof claims.aud === "string" ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === "string") : [];
  const clientId = input.client_id ?? audiences[0];
  if (!clientId || !audiences.includes(clientId)) throw invalid("client_id does not match the ID token");
  const client = await findClient(em, clientId);
  if (!client) throw new OAuthError("INVALID_CLIENT", "Unknown client_id", "invalid_client");
  const target = input.post_logout_redirect_uri;
  if (target !== undefined && !client.postLogoutRedirectUris.includes(target)) throw invalid("post_logout_redirect_uri is not registered for this client");
  if (typeof claims.sid === "string" && typeof claims.sub === "string") {
    const session = await em.findOne(Session, { id: claims.sid, user: claims.sub }, { disableIdentityMap: true, fields: ["id", "tokenHash"] });
    if (session) await inTransaction(em, (tx) => endSession(app, tx, session));
  }
  if (target === undefined) return null;
  const url = new URL(target);
  if (input.state !== undefined) url.searchParams.set("state", input.state);
  return url.toString();
}
