import type { SessionStore } from "../db/session-store/index.ts";
import type { TracedParts, Tracing, TracingOptions } from "./types.ts";

export type { TracedParts, Tracing, TracingOptions } from "./types.ts";

/** The exporters `OTEL_TRACES_EXPORTER` names (comma-separated, as the OpenTelemetry spec); empty or `none`: off. */
export function exportersFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s && s !== "none");
}

/** Tracing for this instance and the session store to use (its calls traced), or undefined: off, the SDK is never imported. */
export async function startTracing(parts: TracedParts, options?: TracingOptions): Promise<{ tracing: Tracing; sessions: SessionStore } | undefined> {
  const exporters = exportersFromEnv();
  if (!options && exporters.length === 0) return undefined;
  const { createTracing } = await import("./tracing.ts");
  return createTracing(parts, options, exporters);
}
