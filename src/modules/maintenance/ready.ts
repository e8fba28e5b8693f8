import type { App } from "../../app.ts";
import { shippedMigrations, type Dialect } from "../../db/orm.ts";
import { AuthError } from "../../errors.ts";
import { publicProcedure } from "../../trpc/init.ts";

/** A database that does not answer within this time is not ready. */
export const READY_TIMEOUT_MS = 2000;

/** The migrations this code ships, per dialect: read from disk once (they change only with a deploy). */
const shipped = new Map<Dialect, string[]>();

function shippedFor(app: App): string[] {
  const dialect: Dialect = app.orm.config.get("clientUrl") ? "postgresql" : "sqlite";
  let names = shipped.get(dialect);
  if (!names) shipped.set(dialect, (names = shippedMigrations(dialect)));
  return names;
}

/**
 * One round trip: the applied migrations. Fails when the database does not answer, or when a
 * migration this code needs is not applied yet: a migration still running (its transaction
 * uncommitted) or not started. An instance of an older version stays ready while a newer one
 * migrates (its own migrations are all there), so a rolling deploy keeps serving.
 */
async function checkSchema(app: App): Promise<void> {
  const rows = (await app.orm.em.getConnection().execute("select name from mikro_orm_migrations")) as { name: string }[];
  const applied = new Set(rows.map((r) => r.name.replace(/\.(ts|js)$/, "")));
  const pending = shippedFor(app).filter((name) => !applied.has(name));
  if (pending.length > 0) throw new Error(`migrations not applied yet: ${pending.join(", ")}`);
}

/**
 * Readiness (GET/HEAD {basePath}/ready): the database answers and its schema is this code's.
 * `GET /ok` says the process serves HTTP (liveness); this says it can also do its work. 503
 * NOT_READY otherwise (logged as a warning with the cause; the answer names none). While `serve`
 * applies migrations at start, a stand-in answers 503 here (src/cli/startup-responder.ts).
 */
export async function checkReady(app: App): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      checkSchema(app),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the database did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    app.logger.warn({ err }, "readiness check failed");
    throw new AuthError("NOT_READY", { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

export const readyProcedure = publicProcedure.query(async ({ ctx }) => {
  await checkReady(ctx.app);
  return { ok: true as const };
});
