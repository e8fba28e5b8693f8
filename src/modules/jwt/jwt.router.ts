import { moduleProcedures, router } from "../../trpc/init.ts";
import { publishedKeys } from "../../core/index.ts";
import { sessionJwt } from "./tokens.ts";

/** better-auth's jwt plugin endpoints (rest-bridge/routes.ts, `// jwt`); 404 when `jwt.enabled` is false. */
const procedures = moduleProcedures("jwt", (config) => config.jwt.enabled);

export const jwtProcedures = {
  /** GET /token: a JWT for the caller's session (docs/machine-access.md). */
  token: procedures.authed.query(async ({ ctx }) => ({ token: await sessionJwt(ctx.app, ctx.auth.entry.value) })),

  /** GET /jwks: the public keys, cacheable by resource servers for `jwt.jwksMaxAgeSec`. */
  jwks: procedures.public.query(async ({ ctx }) => {
    ctx.effects.headers["cache-control"] = `public, max-age=${ctx.app.config.jwt.jwksMaxAgeSec}`;
    return publishedKeys(ctx.app);
  }),
};

export const jwtRouter = router(jwtProcedures);
