import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { ApiKey, type IApiKey } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { type Actor, apiKeyChanged, getUser, isUuid, recordAudit, uuidv7 } from "../../core/index.ts";
import { SERVER_ONLY_KEYS, type CreateInput, type ListInput, type UpdateInput } from "./api-key.schema.ts";

/*
 * API keys (docs/machine-access.md "API keys"), better-auth's api-key plugin shapes. The key is
 * shown once, at creation; the database keeps its SHA-256 and its first 6 characters (`start`).
 * `trusted`: an admin or the library API, who may set the server-only fields.
 */

/** The record apiKeyClient reads (better-auth 1.6's `apikey` model), never the key or its digest. */
export function keyRecord(k: IApiKey) {
  return {
    id: k.id,
    configId: k.configId,
    name: k.name ?? null,
    start: k.start ?? null,
    prefix: k.prefix ?? null,
    referenceId: k.user.id,
    enabled: k.enabled,
    rateLimitEnabled: k.rateLimitEnabled,
    rateLimitTimeWindow: k.rateLimitTimeWindow ?? null,
    rateLimitMax: k.rateLimitMax ?? null,
    requestCount: k.requestCount,
    remaining: k.remaining ?? null,
    refillAmount: k.refillAmount ?? null,
    refillInterval: k.refillInterval ?? null,
    lastRefillAt: k.lastRefillAt ?? null,
    lastRequest: k.lastRequest ?? null,
    expiresAt: k.expiresAt ?? null,
    createdAt: k.createdAt,
    updatedAt: k.updatedAt,
    metadata: k.metadata ? (JSON.parse(k.metadata) as Record<string, unknown>) : null,
    permissions: k.permissions ? (JSON.parse(k.permissions) as Record<string, string[]>) : null,
  };
}

export type KeyRecord = ReturnType<typeof keyRecord>;

type Changes = Omit<Partial<CreateInput & UpdateInput>, "keyId">;

/** better-auth's checks, in its order; a user's own request may not carry a server-only field. */
function checkFields(app: App, input: Changes, trusted: boolean): void {
  const config = app.config.apiKey;
  if (!trusted && SERVER_ONLY_KEYS.some((k) => input[k] !== undefined)) throw new AuthError("SERVER_ONLY_PROPERTY");
  if (input.metadata !== undefined && input.metadata !== null) {
    if (!config.enableMetadata) throw new AuthError("METADATA_DISABLED");
    if (typeof input.metadata !== "object" || Array.isArray(input.metadata)) throw new AuthError("INVALID_METADATA_TYPE");
    if (JSON.stringify(input.metadata).length > 4096) throw new AuthError("METADATA_TOO_LARGE");
  }
  if (input.refillAmount !== undefined && input.refillInterval === undefined) throw new AuthError("REFILL_AMOUNT_AND_INTERVAL_REQUIRED");
  if (input.refillInterval !== undefined && input.refillAmount === undefined) throw new AuthError("REFILL_INTERVAL_AND_AMOUNT_REQUIRED");
  if (input.expiresIn) {
    const days = input.expiresIn / 86400;
    if (days < config.keyExpiration.minExpiresIn) throw new AuthError("EXPIRES_IN_IS_TOO_SMALL");
    if (days > config.keyExpiration.maxExpiresIn) throw new AuthError("EXPIRES_IN_IS_TOO_LARGE");
  }
  if (input.name !== undefined && (input.name.length < 1 || input.name.length > config.maximumNameLength)) throw new AuthError("INVALID_NAME_LENGTH");
}

/** A new key for `userId`: the record plus `key`, shown this once. */
export async function createKey(app: App, em: EntityManager, actor: Actor, userId: string, input: CreateInput, trusted: boolean) {
  const config = app.config.apiKey;
  checkFields(app, input, trusted);
  if (input.prefix !== undefined && (input.prefix.length < 1 || input.prefix.length > config.maximumPrefixLength)) throw new AuthError("INVALID_PREFIX_LENGTH");
  const prefix = input.prefix ?? config.defaultPrefix;
  const key = `${prefix}${randomBytes(config.defaultKeyLength).toString("base64url")}`;
  const now = app.clock.now();
  const expiresInSec = input.expiresIn === undefined ? config.keyExpiration.defaultExpiresIn : input.expiresIn;
  const row = {
    id: uuidv7(),
    configId: "default",
    name: input.name ?? null,
    start: key.slice(0, 6),
    prefix,
    keyHash: sha256(key),
    enabled: true,
    rateLimitEnabled: input.rateLimitEnabled ?? config.rateLimit.enabled,
    rateLimitTimeWindow: input.rateLimitTimeWindow ?? config.rateLimit.timeWindow,
    rateLimitMax: input.rateLimitMax ?? config.rateLimit.maxRequests,
    requestCount: 0,
    remaining: input.remaining ?? input.refillAmount ?? null,
    refillAmount: input.refillAmount ?? null,
    refillInterval: input.refillInterval ?? null,
    lastRefillAt: null,
    lastRequest: null,
    expiresAt: expiresInSec ? new Date(now.getTime() + expiresInSec * 1000) : null,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    permissions: input.permissions ? JSON.stringify(input.permissions) : null,
    createdAt: now,
    updatedAt: now,
  };
  await inTransaction(em, async (tx) => {
    if (!isUuid(userId)) throw new AuthError("USER_NOT_FOUND");
    await getUser(tx, userId);
    await tx.insert(ApiKey, { ...row, user: userId });
    await recordAudit(tx, app.clock, actor, { action: "create-api-key", targetType: "user", targetId: userId, metadata: { keyId: row.id, name: row.name } });
  });
  const created = await em.fork().findOneOrFail(ApiKey, { id: row.id });
  return { ...keyRecord(created), key };
}

/** A key of `userId` (owner-only: another user's key id is not found), or of anyone when `userId` is null (admins). */
async function findKey(em: EntityManager, keyId: string, userId: string | null): Promise<IApiKey> {
  if (!isUuid(keyId)) throw new AuthError("KEY_NOT_FOUND");
  const found = await em.findOne(ApiKey, userId ? { id: keyId, user: userId } : { id: keyId });
  if (!found) throw new AuthError("KEY_NOT_FOUND");
  return found;
}

export async function getKey(em: EntityManager, userId: string, keyId: string): Promise<KeyRecord> {
  return keyRecord(await findKey(em, keyId, userId));
}

export async function listKeys(em: EntityManager, userId: string, query: ListInput = {}) {
  // Anything but a UUID names no user (and PostgreSQL would reject it as a uuid): none of their keys.
  if (!isUuid(userId)) return { apiKeys: [], total: 0, limit: query?.limit, offset: query?.offset };
  const sortBy = query?.sortBy ?? "createdAt";
  const keys = await em.find(ApiKey, { user: userId }, { orderBy: { [sortBy]: query?.sortDirection ?? "desc", id: "asc" } });
  const total = keys.length;
  const page = keys.slice(query?.offset ?? 0, query?.limit !== undefined ? (query?.offset ?? 0) + query.limit : undefined);
  return { apiKeys: page.map(keyRecord), total, limit: query?.limit, offset: query?.offset };
}

/** update: the owner's fields; a trusted caller's also the limits. The cached principal goes (revoke.ts apiKeyChanged). */
export async function updateKey(app: App, em: EntityManager, actor: Actor, userId: string, input: UpdateInput, trusted: boolean): Promise<KeyRecord> {
  const { keyId, configId: _configId, expiresIn, metadata, permissions, ...plain } = input;
  checkFields(app, input, trusted);
  const changes: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain)) if (v !== undefined) changes[k] = v;
  if (expiresIn !== undefined) changes.expiresAt = expiresIn === null ? null : new Date(app.clock.now().getTime() + expiresIn * 1000);
  if (metadata !== undefined) changes.metadata = metadata === null ? null : JSON.stringify(metadata);
  if (permissions !== undefined) changes.permissions = permissions === null ? null : JSON.stringify(permissions);
  if (Object.keys(changes).length === 0) throw new AuthError("NO_VALUES_TO_UPDATE");
  await inTransaction(em, async (tx) => {
    const key = await findKey(tx, keyId, userId);
    await tx.nativeUpdate(ApiKey, { id: key.id }, { ...changes, updatedAt: app.clock.now() });
    apiKeyChanged(app, tx, key.keyHash);
    await recordAudit(tx, app.clock, actor, { action: "update-api-key", targetType: "user", targetId: userId, metadata: { keyId, fields: Object.keys(changes) } });
  });
  return keyRecord(await em.fork().findOneOrFail(ApiKey, { id: keyId }));
}

/**
 * delete (the owner's, `userId`) or an admin's revoke (`userId` null): the row goes and with it
 * the cached principal, here and on every instance (revoke.ts apiKeyChanged).
 */
export async function deleteKey(app: App, em: EntityManager, actor: Actor, keyId: string, userId: string | null): Promise<{ success: true }> {
  await inTransaction(em, async (tx) => {
    const key = await findKey(tx, keyId, userId);
    await tx.nativeDelete(ApiKey, { id: key.id });
    apiKeyChanged(app, tx, key.keyHash);
    const action = userId ? "delete-api-key" : "revoke-api-key";
    await recordAudit(tx, app.clock, actor, { action, targetType: "user", targetId: key.user.id, metadata: { keyId: key.id, name: key.name ?? null } });
  });
  return { success: true };
}
