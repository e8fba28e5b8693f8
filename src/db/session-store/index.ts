import type { Logger } from "pino";
import type { DatabaseTarget } from "../orm.ts";
import type { SessionStore } from "./types.ts";

export * from "./types.ts";
export * from "./access-token.ts";
export * from "./membership.ts";

/** Only the target's driver is loaded. */
export async function createSessionStore(target: DatabaseTarget, logger?: Logger): Promise<SessionStore> {
  if (target.dialect === "sqlite") return (await import("./sqlite.ts")).createSqliteSessionStore(target.location);
  return (await import("./postgres.ts")).createPostgresSessionStore(target.location, logger);
}
