import { z } from "zod";

/** The `sweeper` section of the config (src/config/schema.ts). */
export const sweeperConfig = z
  .object({
    /** Seconds between sweeps; 0 turns the schedule off. */
    intervalSec: z.number().int().min(0).max(7 * 24 * 3600).default(300),
    /** Rows per delete statement: bounded batches keep transactions and locks short. */
    batchSize: z.number().int().positive().max(100_000).default(500),
    /** Audit events older than this many days are swept (the trail stays bounded); null keeps them forever. */
    auditRetentionDays: z.number().int().positive().max(36_500).nullable().default(365),
  })
  .strict()
  .prefault({});
