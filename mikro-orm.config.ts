// CLI entry for `mikro-orm migration:create` (see package.json scripts); re-uses src/db/orm.ts.
import { ormOptions, parseDatabaseUrl } from "./src/db/orm.ts";

const url = process.env.DATABASE_URL ?? "sqlite:./data/migrations-scratch.db";
export default await ormOptions(parseDatabaseUrl(url), { withMigrations: true });
