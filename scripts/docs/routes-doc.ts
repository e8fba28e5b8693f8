/**
 * docs/http-api.md's route table, generated: every REST route of rest-bridge/routes.ts, its tRPC
 * procedure, and who may call it, read from the procedure's meta (its builder, src/trpc/init.ts),
 * so the table cannot say one thing while the code does another.
 */
import { routes } from "../../rest-bridge/routes.ts";
import type { ProcedureMeta } from "../../src/trpc/init.ts";
import { appRouter } from "../../src/trpc/app-router.ts";

const ACCESS: Record<ProcedureMeta["access"], string> = {
  public: "anyone",
  "sign-in": "anyone, but not from an impersonation session or with an API key",
  session: "a session (an impersonation or an API key too)",
  account: "a session (an impersonation too), not an API key",
  lasting: "the user's own session (not an impersonation, not an API key)",
  "step-up": "the user's own session; step-up (password or freshness)",
  fresh: "the user's own session, signed in within `session.freshAgeSec`",
  permission: "a session whose role grants",
};

/** Each route's access as docs/http-api.md says it; throws for a route whose procedure has no access meta. */
export function routeAccess(procedure: string): string {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: ProcedureMeta } } | undefined>;
  const meta = procedures[procedure]?._def.meta;
  if (!meta?.access) throw new Error(`${procedure} was not built by a builder of src/trpc/init.ts (no access meta)`);
  let text = ACCESS[meta.access];
  if (meta.permission) text += ` \`${meta.permission}\`${meta.lasting ? ", from the admin's own session" : meta.account ? ", not with an API key" : ""}`;
  if (meta.feature) text += ` (404 unless \`${meta.feature}.enabled\`)`;
  return text;
}

export function routesTable(): string {
  const lines = ["| REST | tRPC | who may call it |", "|---|---|---|"];
  for (const r of routes) lines.push(`| \`${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}\` | \`${r.procedure}\` | ${routeAccess(r.procedure)} |`);
  return lines.join("\n");
}
