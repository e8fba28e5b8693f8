import { moduleProcedures, router } from "../../trpc/init.ts";
import { actorOf } from "../../core/index.ts";
import * as schema from "./oidc-provider.schema.ts";
import * as clients from "./client-management.ts";
import * as consents from "./consents.ts";

/**
 * @better-auth/oauth-provider's client and consent endpoints (rest-bridge/routes.ts,
 * `// oidc-provider`). Anything that creates or widens lasting access needs the user's own
 * session (an impersonation gets 403); reading and revoking need a session.
 */
const procedures = moduleProcedures("oidcProvider", (config) => config.oidcProvider.enabled);

export const managementProcedures = {
  createClient: procedures.lastingAccess.input(schema.clientFields).mutation(async ({ ctx, input }) => {
    return clients.createManagedClient(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input, { userId: ctx.auth.user.id });
  }),
  getClient: procedures.authed.input(schema.clientIdInput).query(({ ctx, input }) => clients.getOwnClient(ctx.em, ctx.auth.user.id, input.client_id)),
  getClients: procedures.authed.query(({ ctx }) => clients.listOwnClients(ctx.em, ctx.auth.user.id)),
  updateClient: procedures.lastingAccess.input(schema.updateClientInput).mutation(({ ctx, input }) => clients.updateOwnClient(ctx.app, ctx.em, ctx.auth.user.id, input)),
  deleteClient: procedures.authed.input(schema.clientIdInput).mutation(({ ctx, input }) => clients.deleteOwnClient(ctx.em, ctx.auth.user.id, input.client_id)),
  client: router({
    rotateSecret: procedures.lastingAccess.input(schema.clientIdInput).mutation(({ ctx, input }) => clients.rotateOwnSecret(ctx.app, ctx.em, ctx.auth.user.id, input.client_id)),
  }),
  getConsent: procedures.authed.input(schema.consentIdInput).query(({ ctx, input }) => consents.getConsent(ctx.em, ctx.auth.user.id, input.id)),
  getConsents: procedures.authed.query(({ ctx }) => consents.listConsents(ctx.em, ctx.auth.user.id)),
  updateConsent: procedures.lastingAccess.input(schema.updateConsentInput).mutation(({ ctx, input }) => consents.updateConsent(ctx.app, ctx.em, ctx.auth.user.id, input)),
  deleteConsent: procedures.authed.input(schema.consentIdInput).mutation(({ ctx, input }) => consents.deleteConsent(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input.id)),
};

/** /admin/oauth2/*: the `oauthClient` permission, held by the admin's own session. */
export const adminOauth2Router = router({
  createClient: procedures.withPermission("oauthClient", ["create"], { lasting: true }).input(schema.adminClientFields).mutation(async ({ ctx, input }) => {
    return clients.createManagedClient(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input, { admin: true });
  }),
  updateClient: procedures.withPermission("oauthClient", ["update"], { lasting: true }).input(schema.adminUpdateClientInput).mutation(({ ctx, input }) => clients.adminUpdateClient(ctx.app, ctx.em, input)),
  // The console's clients page: every client, and what only an admin may do to any of them.
  listClients: procedures.withPermission("oauthClient", ["list"]).input(schema.adminListClientsInput).query(({ ctx, input }) => clients.adminListClients(ctx.em, input)),
  getClient: procedures.withPermission("oauthClient", ["list"]).input(schema.clientIdInput).query(({ ctx, input }) => clients.adminGetClient(ctx.em, input.client_id)),
  rotateSecret: procedures.withPermission("oauthClient", ["update"], { lasting: true }).input(schema.clientIdInput).mutation(({ ctx, input }) => clients.adminRotateSecret(ctx.app, ctx.em, input.client_id)),
  deleteClient: procedures.withPermission("oauthClient", ["delete"]).input(schema.clientIdInput).mutation(({ ctx, input }) => clients.adminDeleteClient(ctx.em, input.client_id)),
  getClientConsents: procedures.withPermission("oauthClient", ["list"]).input(schema.clientIdInput).query(({ ctx, input }) => consents.adminClientConsents(ctx.em, input.client_id)),
});
