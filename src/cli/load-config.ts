import { resolve } from "node:path";
import { applyEnv, type PortcullisConfig } from "../config/index.ts";
import { loadConfigFile } from "./config-file.ts";
import type { ConfigSources } from "./sources.ts";

/** The config file's default export (if any) with the environment's overrides on top; `sources.file` becomes absolute. */
export async function loadConfig(sources: ConfigSources): Promise<PortcullisConfig> {
  let config: PortcullisConfig = {};
  if (sources.file) {
    sources.file = resolve(sources.file);
    config = await loadConfigFile(sources.file, sources.fileFrom ?? "--config");
  }
  return applyEnv(config, sources.env);
}
