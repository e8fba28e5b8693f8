import { actorOf } from "../../core/index.ts";
import { moduleProcedures, router } from "../../trpc/init.ts";
import * as schema from "./api-key.schema.ts";
import * as keys from "./keys.service.ts";
import { verifyKey } from "./verify.service.ts";

/** better-auth's api-key plugin endpoints (rest-bridge/routes.ts, `// api-key`); 404 when `apiKey.enabled` is false. */
const procedures = moduleProcedures("apiKey", (config) => config.apiKey.enabled);

/*
 * Creating or changing a key is lasting access (core/access.ts): neither an impersonation nor a
 * key-backed principal may do it. Reading, listing and deleting one's own keys: any session.
 */
export const apiKeyRouter = router({
  create: procedures.lastingAccess.input(schema.createInput).mutation(({ ctx, input }) =>
    keys.createKey(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), ctx.auth.user.id, input, false),
  ),
  get: procedures.authed.input(schema.getInput).query(({ ctx, input }) => keys.getKey(ctx.em, ctx.auth.user.id, input.id)),
  list: procedures.authed.input(schema.listInput).query(({ ctx, input }) => keys.listKeys(ctx.em, ctx.auth.user.id, input)),
  update: procedures.lastingAccess.input(schema.updateInput).mutation(({ ctx, input }) =>
    keys.updateKey(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), ctx.auth.user.id, input, false),
  ),
  delete: procedures.authed.input(schema.deleteInput).mutation(({ ctx, input }) =>
    keys.deleteKey(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input.keyId, ctx.auth.user.id),
  ),
  /** Trusted callers only: admins with `apiKey: ["verify"]` (better-auth keeps it server-only). */
  verify: procedures.withPermission("apiKey", ["verify"]).input(schema.verifyInput).mutation(({ ctx, input }) =>
    verifyKey(ctx.app, ctx.em, input.key, input.permissions),
  ),
});

/** The admin routes (under `admin.` in the tree, /admin/* on the wire): every field, for any user. */
export const apiKeyAdminProcedures = {
  /** A key for someone else is lasting access: from the admin's own session, never a key's. */
  createApiKey: procedures.withPermission("apiKey", ["create"], { lasting: true }).input(schema.adminCreateInput).mutation(({ ctx, input }) => {
    const { userId, ...fields } = input;
    return keys.createKey(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), userId, fields, true);
  }),
  listApiKeys: procedures.withPermission("apiKey", ["list"]).input(schema.adminListInput).query(async ({ ctx, input }) => {
    const { apiKeys, total } = await keys.listKeys(ctx.em, input.userId);
    return { apiKeys, total };
  }),
  revokeApiKey: procedures.withPermission("apiKey", ["revoke"]).input(schema.deleteInput).mutation(({ ctx, input }) =>
    keys.deleteKey(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input.keyId, null),
  ),
};
