import type { IncomingHttpHeaders } from "node:http";
import type { App } from "../src/app.ts";
import type { ResolvedSession } from "../src/core/index.ts";
import { AuthError } from "../src/errors.ts";
import { sessionJwt } from "../src/modules/jwt/index.ts";
import { checkPermission, hasPermissionInput } from "../src/modules/organization/index.ts";
import { credentialsOf, resolvePrincipal, type Effects } from "../src/trpc/context.ts";
import { routes, type RouteMatch } from "./routes.ts";

/**
 * Lean paths (docs/performance.md): hot routes answered without the tRPC caller and without a
 * request context, after the bridge has applied the route's guards (rate limit, origin, body).
 * Each does what its builder would (the family's switch, the session, the settle of
 * src/trpc/init.ts) and then the procedure's own function; anything it does not itself answer as
 * the procedure would goes to the procedure instead (undefined, decided before anything is
 * read or written): tracing on (the procedure's span), the family off (404), an input the schema
 * would refuse.
 */
type Lean = (app: App, req: LeanRequest, input: unknown) => Promise<unknown> | undefined;

/** What a lean path reads of the request, and where it leaves the cookies it sets (the bridge sends them, answer or failure). */
export interface LeanRequest {
  headers: IncomingHttpHeaders;
  effects: Effects;
}

const LEAN: Record<string, Lean> = {
  "organization.hasPermission": leanHasPermission,
  token: leanToken,
};

/**
 * The lean paths' exact targets (`{base}{path}`), each matched once: the bridge (server.ts) takes
 * such a request to its route without parsing the URL or asking the page and route matchers.
 * Body or no input only (no query to read); any other spelling of the path takes the general
 * route to the same answer.
 */
export function leanTargetsOf(base: string, match: (method: string, path: string) => RouteMatch | null): Map<string, RouteMatch> {
  const targets = new Map<string, RouteMatch>();
  for (const route of routes) {
    if (!Object.hasOwn(LEAN, route.procedure) || route.input === "query" || route.input === "body+query") continue;
    const found = match(route.method, route.path);
    if (found) targets.set(`${base}${route.path}`, found);
  }
  return targets;
}

export function leanPath(app: App, procedure: string, req: LeanRequest, input: unknown): Promise<unknown> | undefined {
  return app.tracing ? undefined : LEAN[procedure]?.(app, req, input);
}

/** The `session` builder's part: the caller's principal, else 401; answered once this call's cache evictions have left (init.ts `settled`). */
async function withSession<T>(app: App, req: LeanRequest, work: (auth: ResolvedSession) => Promise<T> | T): Promise<T> {
  try {
    // Awaited only when pending: an answer at hand (the cache, SQLite) costs no extra turn.
    const found = resolvePrincipal(app, credentialsOf(app, req.headers), req.effects);
    const auth = found instanceof Promise ? await found : found;
    if (!auth) throw new AuthError("UNAUTHORIZED");
    const output = work(auth);
    return output instanceof Promise ? await output : output;
  } finally {
    await app.invalidation.settled();
  }
}

/** GET {base}/token (jwt.router.ts `token`): the session's JWT, from the per-session cache when it may be. No input. */
function leanToken(app: App, req: LeanRequest, input: unknown): Promise<unknown> | undefined {
  if (!app.config.jwt.enabled || input !== undefined) return undefined;
  return withSession(app, req, async (auth) => ({ token: await sessionJwt(app, auth.entry.value) }));
}

/** The body keys has-permission reads (organization.schema.ts hasPermissionInput). */
const KEYS = new Set(["organizationId", "permissions", "permission"]);

/**
 * POST {base}/organization/has-permission as a lean path (lean.ts): the procedure's own
 * checkPermission. To the procedure instead: the family off, a body the schema refuses or with
 * any other key (a callback field's check is the builder's alone).
 */
export function leanHasPermission(app: App, req: LeanRequest, raw: unknown): Promise<unknown> | undefined {
  if (!app.config.organization.enabled) return undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  for (const key in raw) if (!KEYS.has(key)) return undefined;
  const parsed = hasPermissionInput.safeParse(raw);
  if (!parsed.success) return undefined;
  // Dynamic roles are read in a request's own EntityManager, as the procedure's `ctx.em` would give.
  return withSession(app, req, (auth) => checkPermission(app, () => app.orm.em.fork(), auth, parsed.data));
}
