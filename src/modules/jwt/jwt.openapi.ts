import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";

const jwk = z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.literal("sig") });

/** OpenAPI docs of jwt.router.ts (src/openapi/doc.ts): better-auth's jwt plugin shapes. */
export const jwtDoc = moduleDoc({
  tag: "JWT",
  description:
    "Short-lived JWTs other services verify offline against the JWKS (docs/machine-access.md). get-session also answers the caller's token in the " +
    "`set-auth-jwt` header. Off (404) unless `jwt.enabled`.",
  operations: {
    token: {
      summary: "A JWT for the caller's session",
      description: "`sub` the user, `sid` the session, `email`, `role`, `iss`, `aud`, `iat`, `exp` (`jwt.expirationTime`); `act.sub` the admin of an impersonation.",
      access: "session",
      switchable: true,
      output: z.object({ token: z.string() }),
    },
    jwks: {
      summary: "The public signing keys (RFC 7517 JWK Set)",
      description: "Every key whose tokens may still be alive. Cacheable: `Cache-Control: public, max-age=jwt.jwksMaxAgeSec`.",
      access: "public",
      switchable: true,
      output: z.object({ keys: z.array(jwk) }),
    },
  },
});
