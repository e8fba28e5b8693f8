import type { EntityManager } from "@mikro-orm/core";
import { AuditEvent } from "../db/entities/index.ts";
import type { AuditAction } from "./audit-actions.ts";
import type { Clock } from "./clock.ts";
import { uuidv7 } from "./ids.ts";
import type { RequestInfo, ResolvedSession } from "./session/sessions.ts";

export { AUDIT_ACTIONS, type AuditAction } from "./audit-actions.ts";

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
  action: AuditAction;
  /** "organization": targetId is the organization's id, whatever in it changed (docs/organizations.md). */
  targetType: "user" | "session" | "organization";
  targetId: string | null;
  /** Details of the change; never a secret (no passwords, no tokens). */
  metadata?: Record<string, unknown>;
  /** Overrides the actor's (impersonation start: the session being created is the admin's). */
  impersonatorId?: string | null;
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
