import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * One admin action (docs/wire-contract.md §6), written in the transaction of the change it records.
 * No foreign keys on purpose: the trail outlives the users it names (remove-user keeps it).
 * Ids are UUIDv7, so rows written within the same clock tick still list newest first.
 */
export const AuditEvent = defineEntity({
  name: "AuditEvent",
  tableName: "audit_events",
  // The audit log's filters by user (admin list-audit-events), newest first within each.
  indexes: [
    { properties: ["actorId", "createdAt"], name: "audit_events_actor_created_at_index" },
    { properties: ["impersonatorId", "createdAt"], name: "audit_events_impersonator_created_at_index" },
    { properties: ["targetId", "createdAt"], name: "audit_events_target_created_at_index" },
    // The dashboard's sign-in figures by day (src/db/dashboard.ts).
    { properties: ["action", "createdAt"], name: "audit_events_action_created_at_index" },
  ],
  properties: (p) => ({
    id: p.uuid().primary(),
    // Who acted: the user of the session that made the request; null for the CLI.
    actorId: p.uuid().nullable(),
    // The admin behind an impersonation: set on its start, its stop, and anything done through it.
    impersonatorId: p.uuid().nullable(),
    action: p.string().length(64),
    targetType: p.string().length(32),
    targetId: p.string().length(64).nullable(),
    ip: p.string().length(64).nullable(),
    userAgent: p.text().nullable(),
    // JSON object with action details (never secrets).
    metadata: p.text().nullable(),
    createdAt: p.datetime().index("audit_events_created_at_index"),
  }),
});

export type IAuditEvent = InferEntity<typeof AuditEvent>;
