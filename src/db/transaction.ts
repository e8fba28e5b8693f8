import { FlushMode } from "./mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";

/**
 * Database transactions without AsyncLocalStorage. MikroORM's
 * `em.transactional()` runs its callback inside `TransactionContext.create` and commits through
 * `em.flush()` (UnitOfWork.commit runs `insideFlush.run`): either one switches Node 20's promise
 * hooks on for the life of the process, and every promise pays for them from then on. Here the
 * transaction is begun and ended on the connection of an explicit fork, and every write inside
 * is a native one (`insert`, `nativeUpdate`, `nativeDelete`): nothing is ever flushed.
 */

export interface TransactionOptions {
  /**
   * Inside another transaction, run in a savepoint of it instead of joining it: for a caller that
   * catches a failed statement and goes on (PostgreSQL aborts the whole transaction on an error;
   * rolling back to the savepoint keeps the outer one usable).
   */
  savepoint?: boolean;
}

/**
 * Work to do once the transaction `em` belongs to has committed (the outermost one: a savepoint's
 * release commits nothing), dropped when it rolls back. Outside a transaction it runs at once.
 * Session-cache eviction uses it (core/session): a lookup that read the row before the commit
 * cannot leave it cached after.
 */
export function afterCommit(em: EntityManager, run: () => void): void {
  const ctx = em.getTransactionContext();
  const hooks = ctx === undefined ? undefined : pendingHooks.get(rootOf.get(ctx) ?? ctx);
  if (hooks) hooks.push(run);
  else run();
}

/** The after-commit work of each outermost transaction, by its context. */
const pendingHooks = new WeakMap<object, (() => void)[]>();
/** A savepoint's context → the outermost transaction's. */
const rootOf = new WeakMap<object, object>();

/** A unit of work holding changes at commit: code that expected a flush. They would be lost silently. */
export class PendingChangesError extends Error {
  override name = "PendingChangesError";
}

/**
 * Runs `cb` with a fork of `em` bound to a new transaction: committed when `cb` resolves, rolled
 * back when it throws. Inside a transaction already (`em.isInTransaction()`), `cb` joins it (its
 * writes commit or roll back with the outer ones), or runs in a savepoint with `savepoint: true`.
 * Refuses to commit when the unit of work holds changes (managed entities modified, `em.create`,
 * `persist`, `remove`): write with native operations instead.
 */
export async function inTransaction<T>(em: EntityManager, cb: (tx: EntityManager) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const outer = em.getTransactionContext();
  if (outer && !options.savepoint) return cb(em);
  // clear: false, like em.transactional: entities the caller loaded stay managed here, so a
  // change made to one of them is seen (and refused) at commit instead of being dropped. Flush
  // mode COMMIT: a query never flushes such a change on its way (MikroORM's auto flush).
  const tx = em.fork({ clear: false, flushMode: FlushMode.COMMIT });
  const connection = tx.getConnection("write");
  const ctx = await connection.begin(outer ? { ctx: outer } : {});
  tx.setTransactionContext(ctx);
  if (outer) rootOf.set(ctx, rootOf.get(outer) ?? outer);
  else pendingHooks.set(ctx, []);
  let result: T;
  try {
    result = await cb(tx);
    assertNoPendingChanges(tx, em);
  } catch (err) {
    try {
      await connection.rollback(ctx);
    } catch {
      // The connection is broken too: the caller learns of the first failure, the cause of it all.
    }
    throw err;
  }
  await connection.commit(ctx);
  const hooks = outer ? undefined : pendingHooks.get(ctx);
  for (const run of hooks ?? []) run();
  return result;
}

/** Throws when `tx` would have written something at a flush (or `parent` holds entities to persist or remove). */
function assertNoPendingChanges(tx: EntityManager, parent: EntityManager): void {
  const uow = tx.getUnitOfWork(false);
  const parentUow = parent.getUnitOfWork(false);
  uow.computeChangeSets();
  const pending = uow.getChangeSets();
  const queued = parentUow.getPersistStack().size + parentUow.getRemoveStack().size;
  if (pending.length === 0 && uow.getCollectionUpdates().length === 0 && queued === 0) return;
  const what = pending.map((cs) => `${cs.type} ${cs.name}`).join(", ") || `${queued} queued in the caller's EntityManager`;
  throw new PendingChangesError(`Transaction not committed: its unit of work holds changes that only a flush would write (${what}); use native writes (em.insert, nativeUpdate, nativeDelete)`);
}
