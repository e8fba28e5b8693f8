import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import type { ConfigSources } from "./sources.ts";
import { StartupError } from "./startup-errors.ts";

/**
 * `portcullis <command>` on commander: `--version`, `--help` (exit 0) and help per command; a
 * mistyped command or option is one line on stderr and exit code 1. Each command's code lives in
 * its own file and is imported when it runs.
 */

const COMMANDS = ["serve", "migrate", "create-admin", "openapi", "import better-auth"];

const CONFIG_HELP = "config module whose default export is the config (or PORTCULLIS_CONFIG)";

const ENV_HELP = `
Environment: PORT, HOST, PUBLIC_URL (derived from HOST and PORT when unset), DATABASE_URL,
AUTH_SECRET (or AUTH_SECRETS: comma-separated, newest first), SMTP_URL, REDIS_URL, LOG_LEVEL, METRICS_TOKEN,
<PROVIDER>_CLIENT_ID / _CLIENT_SECRET (google, github, discord), PORTCULLIS_CONFIG.`;

/** Flags people try that are settings here: the unknown-option line says where each one goes. */
const SETTING_FLAGS: Record<string, string> = {
  "--port": "PORT or `port`",
  "--host": "HOST or `host`",
  "--public-url": "PUBLIC_URL or `publicUrl`",
  "--database-url": "DATABASE_URL or `databaseUrl`",
  "--database": "DATABASE_URL or `databaseUrl`",
  "--db": "DATABASE_URL or `databaseUrl`",
  "--secret": "AUTH_SECRET or `secret`",
  "--log-level": "LOG_LEVEL or `logLevel`",
};

/** The package's version: the nearest package.json up from this file (src/cli/ or dist/src/cli/). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "portcullis" && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}

/** The config file a command names, and where the name came from (for error lines). */
export function sourcesFor(configFlag: string | undefined, env: NodeJS.ProcessEnv): ConfigSources {
  if (configFlag) return { file: configFlag, fileFrom: "--config", env };
  if (env.PORTCULLIS_CONFIG) return { file: env.PORTCULLIS_CONFIG, fileFrom: "PORTCULLIS_CONFIG", env };
  return { env };
}

/** One line for a commander refusal ("error: unknown option '--port'" etc.) in the command's words. */
function refusalLine(err: CommanderError, command: string): string {
  const full = command ? `portcullis ${command}` : "portcullis";
  const text = err.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ");
  if (err.code === "commander.unknownCommand") {
    return `portcullis: ${text}. Usage: portcullis <command> [options], commands: ${COMMANDS.join(", ")}; see portcullis --help.`;
  }
  const flag = /unknown option '([^'=]+)/.exec(err.message)?.[1];
  const setting = flag ? SETTING_FLAGS[flag] : undefined;
  if (setting) return `${full}: ${text}. Set it with ${setting} in the config file; see ${full} --help.`;
  return `${full}: ${text}; see ${full} --help.`;
}

export interface CliRun {
  /** Where the running command's config came from (for the error lines of cli.ts). */
  sources: ConfigSources;
}

export function buildProgram(run: CliRun, env: NodeJS.ProcessEnv): Command {
  let current = "";
  const program = new Command("portcullis")
    .description("Self-hosted authentication: typed tRPC procedures and a better-auth-compatible REST API.")
    .version(packageVersion(), "-v, --version", "print the version")
    .helpOption("-h, --help", "show help (also: portcullis <command> --help)")
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: () => undefined })
    .exitOverride((err) => {
      if (err.exitCode === 0 || err.code === "commander.help") throw err; // help, version: already written
      throw new StartupError([refusalLine(err, current)]);
    })
    .addHelpText("after", ENV_HELP);
  program.hook("preSubcommand", (_parent, sub) => {
    current = sub.name();
  });
  const withConfig = (flag: string | undefined) => (run.sources = sourcesFor(flag, env));

  program
    .command("serve")
    .description("start the HTTP service (pending migrations are applied first, in a process of their own)")
    .option("-c, --config <file>", CONFIG_HELP)
    .option("--workers <n>", "n processes sharing the port (node:cluster), or auto (one per core); also PORTCULLIS_WORKERS")
    .addHelpText("after", ENV_HELP)
    .action(async (opts: { config?: string; workers?: string }) => {
      const { serve } = await import("./serve.ts");
      await serve(opts, withConfig(opts.config));
    });

  program
    .command("migrate")
    .description("validate the config, apply pending migrations, print their names and exit")
    .option("-c, --config <file>", CONFIG_HELP)
    .addHelpText("after", ENV_HELP)
    .action(async (opts: { config?: string }) => {
      const { migrate } = await import("./migrate.ts");
      await migrate(withConfig(opts.config));
    });

  program
    .command("create-admin")
    .description("create an admin user (or give an existing user the admin role); prints the user id")
    .requiredOption("--email <email>", "the admin's email address")
    .option("--name <name>", "display name of a new user")
    .option("--password <password>", "discouraged: leaves the password in the process list and shell history")
    .option("-c, --config <file>", CONFIG_HELP)
    .addHelpText(
      "after",
      `\nA new user's password comes from PORTCULLIS_ADMIN_PASSWORD, else standard input when piped,\nelse a prompt that does not echo.${ENV_HELP}`,
    )
    .action(async (opts: { email: string; name?: string; password?: string; config?: string }) => {
      const { createAdminCommand } = await import("./create-admin.ts");
      await createAdminCommand(opts, withConfig(opts.config));
    });

  program
    .command("openapi")
    .description("print the OpenAPI 3.1 document of the REST API (as served at {basePath}/openapi.json)")
    .option("-c, --config <file>", CONFIG_HELP)
    .addHelpText("after", "\nExample: portcullis openapi > openapi.json")
    .action(async (opts: { config?: string }) => {
      const { printOpenApi } = await import("./openapi.ts");
      await printOpenApi(withConfig(opts.config));
    });

  const importer = program.command("import").description("import users from another auth system (import better-auth)");
  importer.hook("preSubcommand", (_parent, sub) => {
    current = `import ${sub.name()}`;
  });
  importer
    .command("better-auth")
    .description("copy a better-auth 1.x database (users, accounts, sessions, reset links) into the configured one; re-runs skip what is there")
    .requiredOption("--from <url>", "the better-auth database: sqlite:<file> or postgres://... (only read)")
    .option("--dry-run", "do everything in one transaction and roll it back: the summary says what a real run would do")
    .option("--batch-size <n>", "rows per read and per transaction (default 500)")
    .option("-c, --config <file>", CONFIG_HELP)
    .addHelpText("after", ENV_HELP)
    .action(async (opts: { from: string; dryRun?: boolean; batchSize?: string; config?: string }) => {
      const { importCommand } = await import("./import.ts");
      await importCommand(opts, withConfig(opts.config));
    });

  return program;
}
