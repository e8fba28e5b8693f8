import type { App } from "../../app.ts";
import { missingMigrations } from "../../db/readiness.ts";
import { AuthError } from "../../errors.ts";
import { publicProcedure } from "../../trpc/init.ts";

/** A database that does not answer within this time is not ready. */
export const READY_TIMEOUT_MS = 2000;

/** The database answers and every migration this code ships is applied. */
async function checkSchema(app: App): Promise<void> {
  const pending = await missingMigrations(app.orm, app.dialect);
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
