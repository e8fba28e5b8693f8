import { ConfigError, type ConfigIssue, type ResolvedConfig } from "../config/index.ts";
import { DatabaseUnavailableError, type DatabaseTarget } from "../db/target.ts";
import { originOf, redactUrl, whereToSet, type ConfigSources } from "./sources.ts";

/**
 * Start-up and config failures as an operator reads them: one line per problem naming the key
 * (and the environment variable when that is where it came from), what is wrong with the value
 * and the fix; exit code 1 and no stack trace (cli.ts).
 */

/** A failure already put into words: each line is printed as is. */
export class StartupError extends Error {
  override name = "StartupError";
  constructor(readonly lines: string[]) {
    super(lines.join("\n"));
  }
}

const PREFIX = "portcullis:";

/** Messages may span lines (driver errors, esbuild): an operator gets each problem on one. */
export const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();

/** What a valid value of a key looks like, after "set X to". */
const VALID: Record<string, string> = {
  secret: "a random string of 32 or more characters (e.g. the output of `openssl rand -base64 32`)",
  secrets: "a comma-separated list of random strings of 32 or more characters, newest first",
  databaseUrl: "sqlite:<file> or postgres://<user>@<host>:5432/<database>",
  port: "a port number from 1 to 65535",
  host: "an address of this machine to listen on (127.0.0.1, 0.0.0.0 or ::)",
  publicUrl: "the http(s) URL users reach the service at (e.g. https://auth.example.com)",
  logLevel: "one of fatal, error, warn, info, debug, trace, silent",
  basePath: "a path that starts with / and does not end with / (e.g. /api/auth)",
  "email.smtpUrl": "smtp://<user>:<password>@<host>:587 or smtps://...",
  "rateLimit.redisUrl": "redis://<host>:6379 or rediss://...",
  "metrics.token": "a random string of 32 or more characters (e.g. the output of `openssl rand -base64 32`)",
};

function validValueOf(key: string): string {
  const top = key.replace(/\.\d+$/, "");
  return VALID[key] ?? VALID[top] ?? "a valid value";
}

export function describeConfigIssue(issue: ConfigIssue, sources: ConfigSources): string {
  const { key } = issue;
  const where = key === "(root)" ? "" : ` (${originOf(key, sources)})`;
  const problem = oneLine(issue.message);
  if (/not a known key/.test(problem)) {
    const file = sources.file ?? "the config";
    return `${PREFIX} config key ${key}${where} ${problem}. Fix: remove it from ${file} or correct its spelling.`;
  }
  if (issue.fix) return `${PREFIX} config key ${key}${where}: ${problem}. Fix: ${issue.fix}${sources.file ? ` in ${sources.file}` : ""}.`;
  return `${PREFIX} config key ${key}${where}: ${problem}. Fix: ${whereToSet(key, sources)} ${validValueOf(key)}.`;
}

function databaseProblem(target: DatabaseTarget, cause: unknown): { problem: string; fix: string } {
  const err = (cause ?? {}) as { code?: string; message?: string; hostname?: string; address?: string; port?: number };
  const message = oneLine(err.message ?? String(cause));
  if (target.dialect === "sqlite") {
    if (err.code === "SQLITE_NOTADB") return { problem: `${target.location} is not a SQLite database`, fix: "set DATABASE_URL to sqlite:<another file>" };
    return {
      problem: `cannot open or create the file ${target.location} (${message})`,
      fix: "make its directory writable by this user, or set DATABASE_URL to sqlite:<a writable file>",
    };
  }
  const url = URL.canParse(target.location) ? new URL(target.location) : null;
  const server = url ? `${url.hostname}:${url.port || 5432}` : "the server";
  const database = url ? decodeURIComponent(url.pathname.slice(1)) : "";
  const user = url ? decodeURIComponent(url.username) : "";
  switch (err.code) {
    case "ECONNREFUSED":
      return { problem: `nothing accepts connections at ${server} (connection refused)`, fix: "start PostgreSQL there, or set DATABASE_URL to the server's address" };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { problem: `the host name ${url?.hostname ?? ""} does not resolve`, fix: "correct the host in DATABASE_URL" };
    case "ETIMEDOUT":
    case "TIMEOUT":
      return { problem: `${server} did not answer in time`, fix: "check that PostgreSQL runs there and that a firewall lets this host through" };
    case "3D000":
      return {
        problem: `the database "${database}" does not exist on ${server} (Portcullis never creates one)`,
        fix: `create it (createdb ${database || "<name>"}, or CREATE DATABASE), or set DATABASE_URL to an existing database`,
      };
    case "28P01":
      return { problem: `${server} refused the password of user "${user}"`, fix: "correct the user and password in DATABASE_URL" };
    case "28000":
      return { problem: `${server} refused user "${user}" (${message})`, fix: "use a role that exists and may connect (pg_hba.conf) in DATABASE_URL" };
    case "57P03":
      return { problem: `${server} is starting up or shutting down`, fix: "start again once PostgreSQL accepts connections" };
    default:
      return { problem: message, fix: "check DATABASE_URL and that the database server accepts this connection" };
  }
}

export function describeDatabaseError(err: DatabaseUnavailableError, sources: ConfigSources): string {
  const { problem, fix } = databaseProblem(err.target, err.cause);
  const shown = err.target.dialect === "sqlite" ? `sqlite:${err.target.location}` : redactUrl(err.target.location);
  const from = sources.env.DATABASE_URL ? "from DATABASE_URL" : sources.file ? `databaseUrl in ${sources.file}` : "the default databaseUrl";
  return `${PREFIX} database ${shown} (${from}): ${problem}. Fix: ${fix}.`;
}

/** A failed server.listen(): the port (or host) is the problem, named where it was set (`port`, or `metrics.port` for the metrics listener). */
export function describeListenError(err: NodeJS.ErrnoException, host: string, port: number, sources: ConfigSources, key = "port"): string {
  const at = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const portFrom = originOf(key, sources);
  const setPort = whereToSet(key, sources);
  switch (err.code) {
    case "EADDRINUSE":
      return `${PREFIX} cannot listen on ${at} (${key}, ${portFrom}): another process already uses this port. Fix: stop that process, or ${setPort} a free port.`;
    case "EACCES":
      return `${PREFIX} cannot listen on ${at} (${key}, ${portFrom}): ports below 1024 need privileges. Fix: ${setPort} 1024 or above (a reverse proxy can serve 443).`;
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `${PREFIX} cannot listen on ${at} (host, ${originOf("host", sources)}): ${host} is not an address of this machine. Fix: ${whereToSet("host", sources)} ${VALID.host}.`;
    default:
      return `${PREFIX} cannot listen on ${at}: ${oneLine(err.message)}.`;
  }
}

/** Listening on the config's port, or one line naming the port (or host) and the fix. */
export async function listenOr<T>(config: ResolvedConfig, sources: ConfigSources, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number };
    if (e.syscall === "listen" || e.syscall === "getaddrinfo" || e.code === "EADDRINUSE") {
      // The metrics listener (metrics.port) fails the same way: name the key that set the port.
      const { port: metricsPort, host: metricsHost } = config.metrics;
      if (metricsPort !== undefined && metricsPort !== config.port && e.port === metricsPort) {
        throw new StartupError([describeListenError(e, metricsHost ?? config.host, metricsPort, sources, "metrics.port")]);
      }
      throw new StartupError([describeListenError(e, config.host, config.port, sources)]);
    }
    throw err;
  }
}

/** Every failure of a command, in lines; a failure nobody foresaw keeps its stack only at LOG_LEVEL=debug or trace. */
export function describeStartupError(err: unknown, sources: ConfigSources): string[] {
  if (err instanceof StartupError) return err.lines;
  if (err instanceof ConfigError) {
    if (err.issues.length > 0) return err.issues.map((issue) => describeConfigIssue(issue, sources));
    return [`${PREFIX} ${oneLine(err.message)}`];
  }
  if (err instanceof DatabaseUnavailableError) return [describeDatabaseError(err, sources)];
  const debug = /^(debug|trace)$/.test(sources.env.LOG_LEVEL ?? "");
  if (debug && err instanceof Error && err.stack) return [`${PREFIX} unexpected error:`, err.stack];
  const message = err instanceof Error ? err.message : String(err);
  return [`${PREFIX} unexpected error: ${oneLine(message)} (LOG_LEVEL=debug prints its stack)`];
}
