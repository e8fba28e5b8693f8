import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { buildBetterAuthSource, type BetterAuthSource } from "../harness/import-helpers.ts";
import { freePort } from "./harness.ts";
import { CLI_SECRET, finish, killChildren, logLines, runCli, waitForStatus } from "./cli-run.ts";

/**
 * Moving over from better-auth as an operator does it (docs/migrating-from-better-auth.md):
 * `portcullis import better-auth` into the configured database, then `portcullis serve` (the
 * compiled CLI) on it. The start looks for imported scrypt hashes (legacy-hashes.ts): it must
 * start, and the imported password must sign in. Source and target on the run's dialect.
 */

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  killChildren();
  for (const c of cleanups) await c();
});

describe(`import better-auth, then serve (${testDialect})`, { timeout: 180_000 }, () => {
  it("the service starts on the imported database and the imported password signs in", async () => {
    const source: BetterAuthSource = await buildBetterAuthSource(testDialect);
    cleanups.push(() => source.drop());
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const env = { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET };

    const imported = runCli(["import", "better-auth", "--from", source.url], env);
    expect(await finish(imported), imported.stderr()).toEqual({ code: 0, signal: null });
    expect(imported.stdout()).toMatch(/account\s+5 read, 5 imported/);

    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const r = runCli(["serve"], { ...env, PORT: String(port) });
    await waitForStatus(r, `${origin}/api/auth/ready`);
    const signIn = await fetch(`${origin}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ email: source.bob.email, password: source.bob.password }),
    });
    expect(signIn.status, await signIn.clone().text()).toBe(200);
    expect(((await signIn.json()) as { user: { email: string } }).user.email).toBe(source.bob.email);
    const wrong = await fetch(`${origin}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ email: source.alice.email, password: "not-alices-password" }),
    });
    expect(wrong.status).toBe(401);

    r.child.kill("SIGTERM");
    expect(await finish(r), r.stderr()).toEqual({ code: 0, signal: null });
    expect(logLines(r.stdout()).filter((l) => l.level >= 40)).toEqual([]);
  });
});
