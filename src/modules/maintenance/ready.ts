import type { App } from "../../app.ts";
import { AuthError } from "../../errors.ts";
import { publicProcedure } from "../../trpc/init.ts";

/** A database that does not answer within this time is not ready. */
export const READY_TIMEOUT_MS = 2000;

/**
 * Readiness (GET {basePath}/ready): one round trip to the database. `GET /ok` says the process
 * serves HTTP; this says it can also do its work. 503 NOT_READY otherwise (logged as a warning
 * with the cause; the answer names none).
 */
export async function checkReady(app: App): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      app.orm.em.getConnection().execute("select 1 as ok"),
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
