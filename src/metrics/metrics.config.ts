import { z } from "zod";

/** The `metrics` section of the config (src/config/schema.ts). */
export const metricsConfig = z
  .object({
    /** Serve GET {path}; off: nothing is counted beyond a few integers and prom-client is never loaded. */
    enabled: z.boolean().default(false),
    /** Where the metrics answer (outside basePath). */
    path: z.string().regex(/^\/[A-Za-z0-9/_.-]*$/, "must be a path starting with /").default("/metrics"),
    /** A port of their own (recommended: keeps them off the public port); unset serves them on the service's port. */
    port: z.number().int().min(0).max(65535).optional(),
    /** Address of that listener; default the service's `host`. */
    host: z.string().min(1).optional(),
    /**
     * A secret scrapers send as `Authorization: Bearer <token>` (env METRICS_TOKEN); set, GET {path} answers 401
     * without it, on either port. Compared in constant time.
     */
    token: z.string().min(32, "must be at least 32 characters").optional(),
    /**
     * Serve them on the service's port without a token even when `NODE_ENV=production`; otherwise production
     * needs `port` or `token` (docs/operations.md, Metrics).
     */
    public: z.boolean().default(false),
  })
  .strict()
  .prefault({});
