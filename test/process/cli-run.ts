import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * `portcullis <args>` (bin/portcullis.cjs, the compiled CLI) or `npm start` as child processes, with
 * an environment free of everything the CLI reads unless a test sets it.
 */

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(REPO, "bin", "portcullis.cjs");
export const CLI_SECRET = "cli-process-secret-cli-process-secret-0123";

const CLI_VARS = [
  "PORTCULLIS_CONFIG", "PORT", "HOST", "DATABASE_URL", "PUBLIC_URL", "AUTH_SECRET", "AUTH_SECRETS", "SMTP_URL", "REDIS_URL",
  "LOG_LEVEL", "NODE_OPTIONS", "PORTCULLIS_WORKERS", "METRICS_TOKEN", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "GOOGLE_CLIENT_ID",
  "GOOGLE_CLIENT_SECRET", "DISCORD_CLIENT_ID", "DISCORD_CLIENT_SECRET",
];

export function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of CLI_VARS) delete env[key];
  return { ...env, NODE_ENV: "development", ...extra };
}

export interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** SIGKILLs whatever a failed test left running. */
export function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children.clear();
}

export function spawnRun(command: string, args: string[], options: SpawnOptions): Run {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once("exit", (code, signal) => r({ code, signal })));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** `node bin/portcullis.cjs <args>` in `cwd` (a temp directory by default) with `env` on a clean environment. */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = tmpdir()): Run {
  return spawnRun(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env) });
}

/** Waits for the exit (SIGKILL after `ms`). */
export async function finish(r: Run, ms = 60_000) {
  const timer = setTimeout(() => r.child.kill("SIGKILL"), ms);
  try {
    return await r.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `url` until it answers `status`; fails early when the process exits. */
export async function waitForStatus(r: Run, url: string, status = 200, ms = 60_000): Promise<Response> {
  let gone = false;
  void r.exited.then(() => (gone = true));
  const deadline = Date.now() + ms;
  for (;;) {
    if (gone) throw new Error(`process exited early\nstdout:\n${r.stdout()}\nstderr:\n${r.stderr()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === status) return res;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} never answered ${status}\nstdout:\n${r.stdout()}\nstderr:\n${r.stderr()}`);
    await new Promise((w) => setTimeout(w, 100));
  }
}

/** A directory of files (name → content) in the temp directory; removed by the returned function. */
export function tempDir(files: Record<string, string>): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "pc-cli-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The JSON log lines among a process's output. */
export function logLines(text: string): Record<string, any>[] {
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, any>);
}

/** A stack trace line ("    at fn (file:1:2)"): start-up errors must never show one. */
export const STACK_LINE = /^\s+at .+[:(]/m;
