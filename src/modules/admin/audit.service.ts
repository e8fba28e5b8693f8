import { randomBytes } from "node:crypto";
import type { EntityManager, FilterQuery } from "@mikro-orm/core";
import type { Clock } from "../../config/index.ts";
import { AuditEvent, type IAuditEvent } from "../../db/entities/index.ts";
import type { RequestInfo, ResolvedSession } from "../../core/session/sessions.ts";
import { isUuid } from "./sessions.service.ts";

/** Who is acting, and from where: every audit record carries it. */
export interface Actor {
  /** null: the operator's CLI. */
  userId: string | null;
  /** The admin behind the acting session when it is an impersonation. */
  impersonatorId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export function actorOf(auth: ResolvedSession, req: RequestInfo): Actor & { userId: string } {
  return { userId: auth.user.id, impersonatorId: auth.session.impersonatedBy, ip: req.ip, userAgent: req.userAgent };
}

export interface AuditEntry {
  action: string;
  targetType: "user" | "session";
  targetId: string | null;
  /** Details of the change; never a secret (no passwords, no tokens). */
  metadata?: Record<string, unknown>;
  /** Overrides the actor's (impersonation start: the session being created is the admin's). */
  impersonatorId?: string | null;
}

/*
 * Monotonic UUIDv7 (RFC 9562 §5.7, counter in rand_a per §6.2 method 1): ids written within
 * one millisecond (or one tick of an injected clock) still sort in write order, so "newest
 * first" is exact. Process-wide on purpose, like the RNG: ordering is a property of the process.
 */
let lastMs = 0;
let counter = 0;

export function uuidv7(nowMs = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Writes the record at once (a native insert) with `em`: the transaction of the change it
 * describes, so there is never a change without its record, nor a record of a change that rolled back.
 */
export async function recordAudit(em: EntityManager, clock: Clock, actor: Actor, entry: AuditEntry): Promise<void> {
  await em.insert(AuditEvent, {
    id: uuidv7(),
    actorId: actor.userId,
    impersonatorId: entry.impersonatorId !== undefined ? entry.impersonatorId : actor.impersonatorId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    ip: actor.ip?.slice(0, 64) ?? null,
    userAgent: actor.userAgent?.slice(0, 1024) ?? null,
    metadata: entry.metadata ? JSON.stringify(entry.metadata) : null,
    createdAt: clock.now(),
  });
}

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
