/**
 * After `import better-auth`, the next start of the service looks for the kept scrypt hashes
 * (src/modules/email-password/legacy-hashes.ts): with the import ledger full, on the run's
 * dialect (source and target). The import also bounds what an imported argon2 hash may cost.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { hash } from "@node-rs/argon2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis, type PortcullisConfig } from "../../../src/index.ts";
import { importBetterAuth, type ImportSummary } from "../../../src/import/index.ts";
import { createTestDatabase, testDialect, type TestDatabase } from "../../harness/database.ts";
import { post } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { BETTER_AUTH_SECRET, buildBetterAuthSource, type BetterAuthSource } from "../../harness/import-helpers.ts";

const SECRETS = ["portcullis-secret-portcullis-secret-0123", BETTER_AUTH_SECRET];
const PUBLIC_URL = "http://127.0.0.1:3000";

/** One statement on a database by its URL (sqlite:<file> or postgres://), as an operator's own tool would run it. */
async function execSql(url: string, sql: string, params: unknown[] = []): Promise<void> {
  if (url.startsWith("sqlite:")) {
    const db = new Database(url.slice("sqlite:".length));
    try {
      db.prepare(sql.replace(/\$\d+/g, "?")).run(...params);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

const config = (databaseUrl: string): PortcullisConfig => ({ databaseUrl, secrets: SECRETS, logLevel: "silent", publicUrl: PUBLIC_URL, rateLimit: { enabled: false } });

/** The highest argon2 cost the import takes (src/import/convert.ts), hashing bob's real password. */
const BOUNDED = { algorithm: 2, memoryCost: 65536, timeCost: 10, parallelism: 4 } as const;
/** A 1 GiB hash: refused by its parameters alone (never verified here). */
const COSTLY = "$argon2id$v=19$m=1048576,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$" + "A".repeat(43);

describe(`restart after an import (${testDialect})`, () => {
  let source: BetterAuthSource;
  let db: TestDatabase;
  let summary: ImportSummary;

  beforeAll(async () => {
    source = await buildBetterAuthSource(testDialect);
    await execSql(source.url, `update "account" set "password" = $1 where "userId" = $2`, [await hash(source.bob.password, BOUNDED), source.bob.id]);
    await execSql(source.url, `update "account" set "password" = $1 where "userId" = $2`, [COSTLY, source.alice.id]);
    db = await createTestDatabase();
    const first = await createPortcullis(config(db.url), { sweep: false });
    try {
      summary = await importBetterAuth({ from: source.url, config: first.app.config, orm: first.app.orm });
    } finally {
      await first.close();
    }
  }, 120_000);
  afterAll(async () => {
    await source?.drop();
    await db?.drop();
  });

  it("an argon2 hash within the bounds is imported; a costlier one fails with the reason", () => {
    expect(summary.tables.account).toMatchObject({ total: 5, imported: 4, failed: 1 });
    expect(summary.tables.account.failures).toEqual([
      { id: expect.any(String), reason: expect.stringMatching(/^argon2 cost above the import's bounds \(m=1048576 KiB, t=2, p=1; at most m=65536, t=10, p=4\)/) },
    ]);
  });

  it("the service starts on the imported database (the probe runs with the ledger full) and the imported passwords sign in", async () => {
    const log = captureLog("warn");
    let second: Portcullis | undefined;
    try {
      second = await createPortcullis(config(db.url), { migrate: false, sweep: false, logger: log.logger });
      const url = await second.listen(0, "127.0.0.1");
      const signIn = (email: string, password: string) => post(`${url}/api/auth/sign-in/email`, { email, password }, { headers: { origin: PUBLIC_URL } });
      const bob = await signIn(source.bob.email, source.bob.password);
      expect(bob.status, bob.text).toBe(200);
      const erin = await signIn(source.erin.email, source.erin.password); // still scrypt; two-factor asks for its second step
      expect(erin.status, erin.text).toBe(200);
      expect(erin.body).toMatchObject({ twoFactorRedirect: true });
      expect((await signIn(source.erin.email, "not-erins-password")).status).toBe(401);
    } finally {
      await second?.close();
    }
    expect(log.lines()).toEqual([]);
  });
});

describe(`a start-up probe that fails (${testDialect})`, () => {
  it("does not stop the start: a warning, and failed sign-ins are timed as if scrypt hashes remain", async () => {
    const db = await createTestDatabase();
    try {
      await (await createPortcullis(config(db.url), { sweep: false })).close();
      // The ledger the probe reads is gone (a restore without it, a role that may not read it).
      await execSql(db.url, "drop table better_auth_imports");
      const log = captureLog("warn");
      const portcullis = await createPortcullis(config(db.url), { migrate: false, sweep: false, logger: log.logger });
      try {
        const url = await portcullis.listen(0, "127.0.0.1");
        const res = await post(`${url}/api/auth/sign-in/email`, { email: "nobody@example.com", password: "some-password-1" }, { headers: { origin: PUBLIC_URL } });
        expect(res.status).toBe(401);
      } finally {
        await portcullis.close();
      }
      expect(log.lines().map((l) => [l.level, l.msg])).toEqual([[40, expect.stringMatching(/^could not tell whether imported better-auth password hashes remain/)]]);
    } finally {
      await db.drop();
    }
  });
});
