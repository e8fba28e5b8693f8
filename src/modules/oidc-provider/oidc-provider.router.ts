import { router, moduleProcedures } from "../../trpc/init.ts";
import type { Context } from "../../trpc/context.ts";
import { AuthError } from "../../errors.ts";
import { actorOf } from "../../core/index.ts";
import * as schema from "./oidc-provider.schema.ts";
import { authorize } from "./authorize.ts";
import { findClient } from "./clients.ts";
import { continueAuthorize, decideConsent } from "./consent.ts";
import { endSessionRequest } from "./end-session.ts";
import { token } from "./grants.ts";
import { introspect, revoke, userInfo } from "./introspection.ts";
import { providerMetadata } from "./metadata.ts";
import { register } from "./registration.ts";
import { managementProcedures } from "./management.router.ts";

/** The OpenID provider's endpoints (rest-bridge/routes.ts, `// oidc-provider`); 404 when `oidcProvider.enabled` is false. */
const procedures = moduleProcedures("oidcProvider", (config) => config.oidcProvider.enabled);

/** RFC 6749 §5.1: token responses are not cached (the bridge sends no-store on all JSON). */
const NO_CACHE = { pragma: "no-cache" };

/** A program (fetch asking for JSON) gets `{ redirect, url }`; a browser navigation the 302. */
function answerRedirect(ctx: Context, url: string) {
  const accept = ctx.req.accept ?? "";
  if (!(accept.includes("application/json") && !accept.includes("text/html"))) ctx.effects.redirect = url;
  return { redirect: true as const, url };
}

const metadata = procedures.public.query(({ ctx }) => {
  ctx.effects.headers["cache-control"] = "public, max-age=300";
  return providerMetadata(ctx.app);
});

const oauth2RouterBuilt = router({
  ...managementProcedures,
  openidConfiguration: metadata,
  authorizationServer: metadata,

  // RFC 6749 §4.1.1, OIDC Core §3.1.2
  authorize: procedures.public.input(schema.authorizeInput).query(async ({ ctx, input }) => {
    const url = await authorize(ctx.app, ctx.em, input, { session: await ctx.getSession() });
    return answerRedirect(ctx, url);
  }),

  // The consent page's decision; an impersonation never consents (403).
  consent: procedures.lastingAccess.input(schema.consentInput).mutation(({ ctx, input }) => decideConsent(ctx.app, ctx.em, ctx.auth, actorOf(ctx.auth, ctx.req), input)),

  // The sign-in page's way back to the authorization request.
  // (better-auth's `selected`, `created`, `postLogin` flags are accepted; each means "go on".)
  continue: procedures.lastingAccess.input(schema.continueInput).mutation(({ ctx, input }) => continueAuthorize(ctx.app, ctx.em, ctx.auth, input)),

  // RFC 6749 §3.2
  token: procedures.public.input(schema.tokenInput).mutation(async ({ ctx, input }) => {
    Object.assign(ctx.effects.headers, NO_CACHE);
    return token(ctx.app, ctx.em, ctx.req.authorization, input);
  }),

  // OIDC Core §5.3 (GET and POST)
  userinfo: procedures.public.input(schema.userInfoInput).query(({ ctx, input }) => userInfo(ctx.app, ctx.req.authorization, input?.access_token)),

  // RFC 7662
  introspect: procedures.public.input(schema.tokenOfClientInput).mutation(({ ctx, input }) => introspect(ctx.app, ctx.em, ctx.req.authorization, input)),

  // RFC 7009
  revoke: procedures.public.input(schema.tokenOfClientInput).mutation(({ ctx, input }) => revoke(ctx.app, ctx.em, ctx.req.authorization, input)),

  // OpenID Connect RP-Initiated Logout 1.0
  endSession: procedures.public.input(schema.endSessionInput).query(async ({ ctx, input }) => {
    const url = await endSessionRequest(ctx.app, ctx.em, input);
    return url === null ? null : answerRedirect(ctx, url);
  }),

  // RFC 7591
  register: procedures.public.input(schema.registerInput).mutation(async ({ ctx, input }) => {
    Object.assign(ctx.effects.headers, NO_CACHE);
    const answer = await register(ctx.app, ctx.em, ctx.req.authorization, input);
    ctx.effects.status = 201;
    return answer;
  }),

  // What the consent page shows of a client (no secrets, no redirect URIs).
  publicClient: procedures.public.input(schema.publicClientInput).query(async ({ ctx, input }) => {
    const client = await findClient(ctx.em, input.client_id);
    if (!client || client.row.disabled) throw new AuthError("OAUTH_CLIENT_NOT_FOUND");
    const r = client.row;
    return { client_id: r.clientId, redirect_uris: [] as string[], client_name: r.name ?? undefined, client_uri: r.uri ?? undefined, logo_uri: r.logoUri ?? undefined, tos_uri: r.tosUri ?? undefined, policy_uri: r.policyUri ?? undefined, contacts: r.contacts ? (JSON.parse(r.contacts) as string[]) : undefined };
  }),
});

type Oauth2RouterType = typeof oauth2RouterBuilt;
/**
 * The OpenID provider's procedures. An interface, so that declarations name it instead of spelling it out: spelled out in
 * the app router, the composed type passes the compiler's limit for one declaration (TS7056).
 */
export interface Oauth2Router extends Oauth2RouterType {}
export const oauth2Router: Oauth2Router = oauth2RouterBuilt;
