import type { Context } from "../src/trpc/context.ts";
import { AuthError } from "../src/errors.ts";
import { checkPermission, hasPermissionInput } from "../src/modules/organization/index.ts";

/** The body keys has-permission reads (organization.schema.ts hasPermissionInput). */
const KEYS = new Set(["organizationId", "permissions", "permission"]);

/**
 * POST {base}/organization/has-permission without the tRPC caller (docs/performance.md): what
 * its builder would run (the family's switch, the session, the settle of src/trpc/init.ts), then
 * the procedure's own checkPermission. The bridge has applied the route's guards already (rate
 * limit, origin, body). Anything the lean path does not itself answer as the procedure would
 * goes to the procedure instead (undefined): tracing on, the family off, a body the schema
 * refuses or with any other key (a callback field's check is the builder's alone).
 */
export function leanHasPermission(ctx: Context, raw: unknown): Promise<unknown> | undefined {
  const { app } = ctx;
  if (app.tracing || !app.config.organization.enabled) return undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  for (const key in raw) if (!KEYS.has(key)) return undefined;
  const parsed = hasPermissionInput.safeParse(raw);
  return parsed.success ? answer(ctx, parsed.data) : undefined;
}

async function answer(ctx: Context, input: NonNullable<ReturnType<typeof hasPermissionInput.safeParse>["data"]>): Promise<unknown> {
  try {
    const auth = await ctx.getSession();
    if (!auth) throw new AuthError("UNAUTHORIZED");
    return await checkPermission(ctx.app, () => ctx.em, auth, input);
  } finally {
    // As every procedure (init.ts `settled`): answered once this call's cache evictions have left.
    await ctx.app.invalidation.settled();
  }
}
