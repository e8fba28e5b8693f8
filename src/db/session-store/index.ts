import type { DatabaseTarget } from "../orm.ts";
import { createPostgresSessionStore } from "./postgres.ts";
import { createSqliteSessionStore } from "./sqlite.ts";
import type { SessionStore } from "./types.ts";

export * from "./types.ts";

export function createSessionStore(target: DatabaseTarget): SessionStore {
  return target.dialect === "sqlite"
    ? createSqliteSessionStore(target.location)
    : createPostgresSessionStore(target.location);
}
