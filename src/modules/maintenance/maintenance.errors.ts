import type { ErrorTable } from "../../error-table.ts";

/**
 * Health checks. Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const maintenanceErrors = {
  // 503
  NOT_READY: [503, "Service not ready"],
} as const satisfies ErrorTable;
