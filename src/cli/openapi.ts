import { resolveConfig } from "../config/index.ts";
import { loadConfig } from "./load-config.ts";
import type { ConfigSources } from "./sources.ts";

/**
 * `portcullis openapi > openapi.json`: the OpenAPI 3.1 document of this configuration (servers
 * from publicUrl and basePath), as served at {base}/openapi.json, on stdout for client
 * generators. No database is opened; nothing else is written to stdout.
 */
export async function printOpenApi(sources: ConfigSources): Promise<void> {
  const config = resolveConfig(await loadConfig(sources));
  const { openApiDocument } = await import("../openapi/index.ts");
  process.stdout.write(`${JSON.stringify(openApiDocument(config), null, 2)}\n`);
}
