import type { Family } from "../../core/index.ts";
import { sessionJwt } from "./tokens.ts";

export { jwtDoc } from "./jwt.openapi.ts";
export { jwtProcedures } from "./jwt.router.ts";
export { sessionJwt } from "./tokens.ts";

/**
 * JWTs in the kernel: every get-session answer with a session carries the caller's JWT in
 * `set-auth-jwt` (better-auth's jwt plugin), unless `jwt.disableSettingJwtHeader`. A failure to
 * sign is logged and the answer goes out without the header: get-session never fails for it.
 */
export const jwtFamily: Family = {
  name: "jwt",
  sessionHeaders(app, value) {
    if (!app.config.jwt.enabled || app.config.jwt.disableSettingJwtHeader) return null;
    const token = sessionJwt(app, value);
    if (!(token instanceof Promise)) return { "set-auth-jwt": token };
    return token.then(
      (t) => ({ "set-auth-jwt": t }),
      (err: unknown) => {
        app.logger.error({ err }, "could not sign the set-auth-jwt token");
        return {};
      },
    );
  },
};
