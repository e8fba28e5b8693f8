import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from "@mikro-orm/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl } from "../../../src/db/orm.ts";
import { inTransaction, PendingChangesError } from "../../../src/db/transaction.ts";
import { createTestDatabase, testDialect, type TestDatabase } from "../../harness/database.ts";

/**
 * src/db/transaction.ts on a real database: the transactions every service writes in, begun on
 * an explicit fork (no MikroORM TransactionContext, no flush: test/process/no-async-context.test.ts
 * proves the serving process never enables AsyncLocalStorage). Commit, rollback, joining an outer
 * transaction, savepoints, and the refusal of changes only a flush would have written.
 */

let db: TestDatabase;
let orm: MikroORM;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm(parseDatabaseUrl(db.url));
  await migrateUp(orm);
});
afterAll(async () => {
  await orm?.close();
  await db?.drop();
});

function newUser(overrides: Partial<{ email: string; name: string }> = {}) {
  const now = new Date();
  return {
    id: randomUUID(),
    email: overrides.email ?? `tx.${randomUUID()}@example.test`,
    name: overrides.name ?? "Tx",
    emailVerified: false,
    role: "user",
    banned: false,
    twoFactorEnabled: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** Read through a connection of its own: what is committed, and only that. */
async function committed(id: string): Promise<{ name: string } | null> {
  const rows = await orm.em.fork().getConnection().execute<{ name: string }[]>("select name from users where id = ?", [id]);
  return rows[0] ?? null;
}

const em = (): EntityManager => orm.em.fork();

describe(`inTransaction (${testDialect})`, () => {
  it("commits the callback's native writes and answers its value; a throw rolls them all back", async () => {
    const a = newUser();
    const b = newUser();
    expect(await inTransaction(em(), async (tx) => {
      await tx.insert(User, a);
      await tx.nativeUpdate(User, { id: a.id }, { name: "Renamed" });
      return "done";
    })).toBe("done");
    expect(await committed(a.id)).toEqual({ name: "Renamed" });

    await expect(inTransaction(em(), async (tx) => {
      await tx.insert(User, b);
      await tx.nativeUpdate(User, { id: a.id }, { name: "Lost" });
      throw new Error("boom");
    })).rejects.toThrow("boom");
    expect(await committed(b.id)).toBeNull();
    expect(await committed(a.id)).toEqual({ name: "Renamed" });
  });

  it("refuses to commit what only a flush would write: a modified entity, em.create, a change to an entity loaded before", async () => {
    const a = newUser();
    await inTransaction(em(), (tx) => tx.insert(User, a));

    await expect(inTransaction(em(), async (tx) => {
      await tx.nativeUpdate(User, { id: a.id }, { name: "Native" });
      const user = await tx.findOneOrFail(User, { id: a.id });
      user.name = "Managed";
    })).rejects.toThrow(PendingChangesError);
    expect(await committed(a.id)).toEqual({ name: "Tx" }); // the native update rolled back with it

    const created = newUser();
    await expect(inTransaction(em(), async (tx) => {
      tx.create(User, created);
    })).rejects.toThrow(/create User/);
    expect(await committed(created.id)).toBeNull();

    const outer = em();
    const loaded = await outer.findOneOrFail(User, { id: a.id });
    await expect(inTransaction(outer, async () => {
      loaded.name = "Changed before the commit";
    })).rejects.toThrow(/update User/);
    expect(await committed(a.id)).toEqual({ name: "Tx" });
  });

  it("a query inside never flushes a pending change on its way (no auto flush): the commit refuses it", async () => {
    const a = newUser();
    await inTransaction(em(), (tx) => tx.insert(User, a));
    await expect(inTransaction(em(), async (tx) => {
      const user = await tx.findOneOrFail(User, { id: a.id });
      user.name = "Pending";
      expect(await tx.count(User, { id: a.id, name: "Pending" })).toBe(0);
    })).rejects.toThrow(PendingChangesError);
    expect(await committed(a.id)).toEqual({ name: "Tx" });
  });

  it("inside a transaction, joins it: the inner writes commit or roll back with the outer ones", async () => {
    const a = newUser();
    const b = newUser();
    await expect(inTransaction(em(), async (tx) => {
      await tx.insert(User, a);
      await inTransaction(tx, async (inner) => {
        expect(inner).toBe(tx);
        await inner.insert(User, b);
      });
      throw new Error("outer fails after the inner one finished");
    })).rejects.toThrow("outer fails");
    expect(await committed(a.id)).toBeNull();
    expect(await committed(b.id)).toBeNull();
  });

  it("savepoint: a unique violation caught inside an outer transaction leaves it usable, and it commits the rest", async () => {
    const taken = newUser();
    await inTransaction(em(), (tx) => tx.insert(User, taken));
    const a = newUser();
    const b = newUser();
    const clash = newUser({ email: taken.email });
    const outcome = await inTransaction(em(), async (tx) => {
      await tx.insert(User, a);
      let refused: unknown = null;
      try {
        await inTransaction(tx, async (sp) => {
          await sp.nativeUpdate(User, { id: a.id }, { name: "Inside the savepoint" });
          await sp.insert(User, clash);
        }, { savepoint: true });
      } catch (err) {
        refused = err;
      }
      // PostgreSQL would refuse every further statement of an aborted transaction: not here.
      await tx.insert(User, b);
      return refused;
    });
    expect(outcome).toBeInstanceOf(UniqueConstraintViolationException);
    expect(await committed(a.id)).toEqual({ name: "Tx" }); // rolled back to the savepoint
    expect(await committed(b.id)).toEqual({ name: "Tx" });
    expect(await committed(clash.id)).toBeNull();

    // and a savepoint that succeeds is released into the outer transaction
    const c = newUser();
    await inTransaction(em(), (tx) => inTransaction(tx, (sp) => sp.insert(User, c), { savepoint: true }));
    expect(await committed(c.id)).toEqual({ name: "Tx" });
  });

  it("outside a transaction, the savepoint option starts an ordinary one", async () => {
    const a = newUser();
    await inTransaction(em(), (tx) => tx.insert(User, a), { savepoint: true });
    expect(await committed(a.id)).toEqual({ name: "Tx" });
  });
});
