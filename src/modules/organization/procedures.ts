import { moduleProcedures } from "../../trpc/init.ts";

/** The organization family's builders: 404 when `organization.enabled` is false (docs/architecture.md "One guard per rule"). */
export const procedures = moduleProcedures("organization", (config) => config.organization.enabled);
