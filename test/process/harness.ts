import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Real server processes: `node bin/portcullis.cjs serve` as an operator runs it, configured by
 * a config file and the environment (DATABASE_URL, PORT, HOST, AUTH_SECRET).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SECRET = "process-test-secret-process-test-secret-0123";

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as { port: number };
  await new Promise((r) => probe.close(r));
  return port;
}

/** A config module in a temp directory (the CLI imports it); removed by the returned function. */
export function configFile(config: Record<string, unknown>): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "pc-config-"));
  const path = join(dir, "portcullis.config.mjs");
  writeFileSync(path, `export default ${JSON.stringify(config, null, 2)};\n`);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ServerProcess {
  url: string;
  auth: string;
  child: ChildProcess;
  /** Everything the process wrote (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then waits for the exit (15 s at most; killAll() ends what is left). */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every server process still running (a failed test must not leave one behind). */
export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/** Spawns a server (`nodeArgs` go to node, before the script) and waits until GET /api/auth/ready answers 200. */
export async function startServerProcess(opts: {
  databaseUrl: string;
  config: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** Another copy's CLI (an installed package's bin/portcullis.cjs), run from `cwd`; default this checkout's. */
  bin?: string;
  cwd?: string;
}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.bin ?? join(ROOT, "bin/portcullis.cjs"), "serve", "--config", opts.config], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, DATABASE_URL: opts.databaseUrl, PORT: String(port), HOST: "127.0.0.1", AUTH_SECRET: SECRET, NODE_ENV: "production", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((r) => child.once("exit", (code, signal) => r(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`server process exited before it was ready:\n${out}`);
    try {
      const res = await fetch(`${url}/api/auth/ready`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`server process not ready within 60 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async () => {
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  };
  return { url, auth: `${url}/api/auth`, child, output: () => out, exited, kill: (signal) => void child.kill(signal), stop };
}

export interface JsonReply {
  status: number;
  body: any;
  headers: Headers;
}

/** POST JSON; a connection that dies (the server was killed) rejects. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<JsonReply> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<JsonReply> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
