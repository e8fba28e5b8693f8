import type { EntityManager } from "@mikro-orm/core";
import { DeviceCode, type IDeviceCode } from "../../db/entities/index.ts";
import { isUuid, listAccounts } from "../../core/index.ts";

/*
 * What the admin console's user page shows besides sessions: the user's linked accounts and the
 * device codes they claimed. Read-only; an unknown user simply has none (like list-user-sessions).
 */

/** docs/wire-contract.md §2 accounts: never a token or a password hash. */
export async function listUserAccounts(em: EntityManager, userId: string) {
  return isUuid(userId) ? listAccounts(em, userId) : [];
}

/**
 * No user code and no device code: the user code still claims or approves a pending request,
 * so an admin's screen (or a screenshot of it) must not carry it.
 */
function publicDeviceCode(d: IDeviceCode) {
  return {
    id: d.id,
    clientId: d.clientId,
    scope: d.scope ?? null,
    status: d.status as "pending" | "approved" | "denied",
    lastPolledAt: d.lastPolledAt ? d.lastPolledAt.toISOString() : null,
    expiresAt: d.expiresAt.toISOString(),
    createdAt: d.createdAt.toISOString(),
  };
}

/** Device codes the user claimed (GET /device while signed in), newest first; expired ones until the sweeper takes them. */
export async function listUserDeviceCodes(em: EntityManager, userId: string) {
  if (!isUuid(userId)) return [];
  const codes = await em.find(DeviceCode, { user: userId }, { orderBy: [{ createdAt: "desc" }, { id: "desc" }], limit: 100 });
  return codes.map(publicDeviceCode);
}
