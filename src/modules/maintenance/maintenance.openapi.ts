import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";

const ok = z.object({ ok: z.literal(true) });

/** OpenAPI docs of the health procedures (session.router.ts `ok`, ready.ts). */
export const healthDoc = moduleDoc({
  tag: "Health",
  description: "Liveness and readiness probes.",
  operations: {
    ok: { summary: "Liveness: the process serves HTTP", access: "public", output: ok },
    ready: {
      summary: "Readiness: the database answers",
      description: "One round trip to the database, within 2 s; otherwise 503 NOT_READY.",
      access: "public",
      output: ok,
      errors: ["NOT_READY"],
    },
  },
});
