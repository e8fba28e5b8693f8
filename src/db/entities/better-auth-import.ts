import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * The ledger of `portcullis import better-auth` (src/import/): one row per better-auth row it
 * imported, by better-auth table and id, written in the same transaction as the row. A re-run
 * skips what the ledger names, so a session revoked, a link used, an account unlinked or a user
 * deleted here since never comes back from the old database. The Portcullis id is
 * importedId(sourceId) (src/import/ids.ts). No foreign keys: the ledger outlives the rows.
 */
export const BetterAuthImport = defineEntity({
  name: "BetterAuthImport",
  tableName: "better_auth_imports",
  properties: (p) => ({
    sourceTable: p.string().length(16).primary(),
    sourceId: p.string().length(255).primary(),
    importedAt: p.datetime(),
  }),
});

export type IBetterAuthImport = InferEntity<typeof BetterAuthImport>;
