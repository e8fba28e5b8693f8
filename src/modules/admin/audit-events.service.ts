import type { EntityManager, FilterQuery } from "@mikro-orm/core";
import { isUuid } from "../../core/index.ts";
import { AuditEvent, type IAuditEvent } from "../../db/entities/index.ts";

/** The audit trail as admins read it (GET /admin/list-audit-events); records are written by core/audit.ts. */

export function publicAuditEvent(e: IAuditEvent) {
  return {
    id: e.id,
    actorId: e.actorId ?? null,
    impersonatorId: e.impersonatorId ?? null,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId ?? null,
    ip: e.ip ?? null,
    userAgent: e.userAgent ?? null,
    metadata: e.metadata ? (JSON.parse(e.metadata) as Record<string, unknown>) : null,
    createdAt: e.createdAt.toISOString(),
  };
}

/**
 * The filters as a where clause. actor_id and impersonator_id are uuid columns (PostgreSQL rejects
 * anything else): a filter on a non-UUID matches nothing rather than failing.
 */
function auditWhere(filter: AuditFilter): FilterQuery<IAuditEvent> | null {
  const where: FilterQuery<IAuditEvent> & Record<string, unknown> = {};
  if (filter.action !== undefined) where.action = filter.action;
  if (filter.targetId !== undefined) where.targetId = filter.targetId;
  if (filter.actorId !== undefined) {
    if (!isUuid(filter.actorId)) return null;
    where.actorId = filter.actorId;
  }
  if (filter.userId !== undefined) {
    const id = filter.userId;
    where.$or = isUuid(id) ? [{ actorId: id }, { impersonatorId: id }, { targetId: id }] : [{ targetId: id }];
  }
  return where;
}

export interface AuditFilter {
  action?: string | undefined;
  actorId?: string | undefined;
  targetId?: string | undefined;
  userId?: string | undefined;
}

/**
 * Newest first, filtered (indexes: audit_events_{actor,impersonator,target}_created_at_index); the
 * count runs in the database (not findAndCount: it runs in an AsyncLocalStorage, src/db/transaction.ts).
 */
export async function listAuditEvents(em: EntityManager, page: { limit: number; offset: number }, filter: AuditFilter = {}) {
  const where = auditWhere(filter);
  if (!where) return { events: [], total: 0, limit: page.limit, offset: page.offset };
  const [events, total] = await Promise.all([
    em.find(AuditEvent, where, { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: page.limit, offset: page.offset }),
    em.count(AuditEvent, where),
  ]);
  return { events: events.map(publicAuditEvent), total, limit: page.limit, offset: page.offset };
}

export interface AuditExportQuery extends AuditFilter {
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/**
 * The audit export (GET /admin/export-audit-events, docs/operations.md "Audit"): oldest first by
 * id (UUIDv7: time-ordered), after `cursor`, within [`since`, `until`). A page of `limit` events
 * and the cursor of the next page (null: nothing more yet; a shipper resumes from its last id).
 */
export async function exportAuditEvents(em: EntityManager, query: AuditExportQuery) {
  const { since, until, cursor, limit, ...filter } = query;
  const where = auditWhere(filter) as (FilterQuery<IAuditEvent> & Record<string, unknown>) | null;
  if (!where) return { events: [], nextCursor: null };
  if (cursor !== undefined) where.id = { $gt: cursor.toLowerCase() };
  if (since !== undefined || until !== undefined) {
    where.createdAt = { ...(since !== undefined ? { $gte: new Date(since) } : {}), ...(until !== undefined ? { $lt: new Date(until) } : {}) };
  }
  const rows = await em.find(AuditEvent, where, { orderBy: { id: "asc" }, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return { events: page.map(publicAuditEvent), nextCursor: rows.length > limit ? page.at(-1)!.id : null };
}
