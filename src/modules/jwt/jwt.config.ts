import { z } from "zod";

/** The `jwt` section of the config (src/config/schema.ts). */
export const jwtConfig = z
  .object({
    /** GET /token, GET /jwks and the `set-auth-jwt` header of get-session. Off: those routes answer 404. */
    enabled: z.boolean().default(true),
    /** JWS algorithm of new keys: `EdDSA` (Ed25519), `ES256` (P-256) or `RS256` (RSA 2048). Changing it rotates to a new key at once. */
    alg: z.enum(["EdDSA", "ES256", "RS256"]).default("EdDSA"),
    /** `iss` of the tokens; default the public URL (`publicUrl`, as better-auth's base URL). */
    issuer: z.string().min(1).max(2048).optional(),
    /** `aud` of the tokens (one or several); default the issuer. */
    audience: z.union([z.string().min(1).max(2048), z.array(z.string().min(1).max(2048)).min(1).max(16)]).optional(),
    /** Lifetime of a token, in seconds (better-auth's `expirationTime`, "15m"). */
    expirationTime: z.number().int().min(30).max(24 * 3600).default(15 * 60),
    /** A new signing key every this many days; a retired key stays in the JWKS until every token it signed has expired. */
    rotationDays: z.number().int().min(1).max(3650).default(30),
    /** `Cache-Control: public, max-age` of GET /jwks, in seconds: how long resource servers may keep the key set. */
    jwksMaxAgeSec: z.number().int().min(0).max(24 * 3600).default(300),
    /** Do not send the `set-auth-jwt` header with get-session (better-auth's `disableSettingJwtHeader`). */
    disableSettingJwtHeader: z.boolean().default(false),
  })
  .strict()
  .prefault({});
