import { randomUUID } from "node:crypto";
import { raw, UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { DeviceCode, User, type IDeviceCode } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError, OAuthError } from "../../errors.ts";
import { bannedUser, isBanActive, issueSession, type RequestInfo, userRow } from "../../core/index.ts";
import { formatUserCode, generateUserCode, normalizeUserCode, verificationUris } from "./device.rules.ts";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval for all later requests. */
const SLOW_DOWN_STEP_SEC = 5;
/** Expired rows are kept a day (polls get expired_token), then purged when new codes are made. */
export const PURGE_AFTER_MS = 24 * 3600 * 1000;

type Status = "pending" | "approved" | "denied";

async function checkClient(app: App, clientId: string): Promise<void> {
  const validate = app.config.deviceAuthorization.validateClient;
  if (validate && !(await validate(clientId))) throw new OAuthError("INVALID_CLIENT", "Unknown client_id");
}

/** RFC 8628 §3.1-3.2: the device authorization request and its response. */
export async function requestCode(app: App, em: EntityManager, input: { clientId: string; scope: string | null }) {
  await checkClient(app, input.clientId);
  const { expiresInSec, intervalSec } = app.config.deviceAuthorization;
  const deviceCode = randomToken(32);
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode();
    const now = app.clock.now();
    // User codes are unique among live codes: free this one if an expired row still holds it.
    await em.nativeDelete(DeviceCode, {
      $or: [{ userCode, expiresAt: { $lte: now } }, { expiresAt: { $lt: new Date(now.getTime() - PURGE_AFTER_MS) } }],
    });
    try {
      await em.insert(DeviceCode, {
        id: randomUUID(),
        deviceCodeHash: sha256(deviceCode),
        userCode,
        clientId: input.clientId,
        scope: input.scope,
        status: "pending",
        user: null,
        intervalSec,
        lastPolledAt: null,
        expiresAt: new Date(now.getTime() + expiresInSec * 1000),
        createdAt: now,
      });
    } catch (err) {
      // A live code already holds this user code (1 in 2^40 per live code): draw again.
      if (err instanceof UniqueConstraintViolationException && attempt < 5) continue;
      throw err;
    }
    return {
      device_code: deviceCode,
      user_code: formatUserCode(userCode),
      ...verificationUris(app.config, userCode),
      expires_in: expiresInSec,
      interval: intervalSec,
    };
  }
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
}

/** RFC 8628 §3.4-3.5: one poll of the token endpoint. */
export async function pollToken(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  input: { deviceCode: string; clientId: string },
): Promise<TokenResponse> {
  const row = await approvedCode(app, em, input);
  return exchange(app, em, req, row);
}

/**
 * The OpenID provider's device_code grant (core/registry.ts TokenGrant): the same poll, and the
 * approved code is spent by one conditional delete; the provider mints its own tokens for the
 * user and scope answered here instead of a session.
 */
export async function redeemForTokens(app: App, em: EntityManager, input: { deviceCode: string; clientId: string }) {
  const row = await approvedCode(app, em, input);
  const userId = await approverWhoMaySignIn(app, em, row);
  const consumed = await em.nativeDelete(DeviceCode, { id: row.id, status: "approved" });
  if (consumed !== 1) throw new OAuthError("INVALID_GRANT", "Invalid device code");
  return { userId, scope: row.scope ?? null };
}

/** A poll that ends in the approved row; every other outcome throws its RFC 8628 §3.5 error. */
async function approvedCode(app: App, em: EntityManager, input: { deviceCode: string; clientId: string }): Promise<IDeviceCode> {
  await checkClient(app, input.clientId);
  const row = await em.findOne(DeviceCode, { deviceCodeHash: sha256(input.deviceCode) });
  if (!row) throw new OAuthError("INVALID_GRANT", "Invalid device code");
  if (row.clientId !== input.clientId) throw new OAuthError("INVALID_GRANT", "client_id does not match the device code");
  const now = app.clock.now();
  if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError("EXPIRED_TOKEN", "Device code has expired");
  const status = row.status as Status;
  if (status === "denied") throw new OAuthError("ACCESS_DENIED", "The user denied the authorization request");
  if (status === "approved") return row;

  // Pending: slow_down when polled faster than the interval (RFC 8628 §3.5).
  const last = row.lastPolledAt ?? null;
  if (last && now.getTime() - last.getTime() < row.intervalSec * 1000) {
    await em.nativeUpdate(DeviceCode, { id: row.id }, { intervalSec: raw(`interval_sec + ${SLOW_DOWN_STEP_SEC}`), lastPolledAt: now });
    throw slowDown(row.intervalSec + SLOW_DOWN_STEP_SEC);
  }
  // Conditional on the poll we read: of two concurrent polls, only one is on time.
  const onTime = await em.nativeUpdate(DeviceCode, { id: row.id, lastPolledAt: last }, { lastPolledAt: now });
  if (onTime === 0) {
    await em.nativeUpdate(DeviceCode, { id: row.id }, { intervalSec: raw(`interval_sec + ${SLOW_DOWN_STEP_SEC}`) });
    throw slowDown(row.intervalSec + SLOW_DOWN_STEP_SEC);
  }
  throw new OAuthError("AUTHORIZATION_PENDING", "The user has not yet approved the request");
}

function slowDown(intervalSec: number): OAuthError {
  return new OAuthError("SLOW_DOWN", `Polling too frequently: wait at least ${intervalSec} seconds between requests`);
}

/**
 * The approved code is exchanged exactly once: one conditional delete decides, and the session
 * is issued in the same transaction. Every way to get a session refuses a banned user
 * (docs/wire-contract.md §4): the grant then ends as access_denied, with no session.
 */
async function approverWhoMaySignIn(app: App, em: EntityManager, row: IDeviceCode): Promise<string> {
  const userId = row.user?.id;
  const user = userId ? await em.findOne(User, { id: userId }) : null;
  if (!user || isBanActive(userRow(user), app.clock.now())) {
    await em.nativeUpdate(DeviceCode, { id: row.id, status: "approved" }, { status: "denied" });
    throw new OAuthError("ACCESS_DENIED", "The approving user cannot sign in");
  }
  return user.id;
}

async function exchange(app: App, em: EntityManager, req: RequestInfo, row: IDeviceCode): Promise<TokenResponse> {
  const userId = await approverWhoMaySignIn(app, em, row);
  const issued = await inTransaction(em, async (tx) => {
    const consumed = await tx.nativeDelete(DeviceCode, { id: row.id, status: "approved" });
    if (consumed !== 1) throw new OAuthError("INVALID_GRANT", "Invalid device code");
    return await issueSession(app, tx, req, { userId });
  });
  const expiresIn = Math.floor((issued.session.expiresAt.getTime() - app.clock.now().getTime()) / 1000);
  return { access_token: issued.token, token_type: "Bearer", expires_in: expiresIn, scope: row.scope ?? "" };
}

/** A live code by its user code, for the verification endpoints (RFC 8628 §3.3). */
async function findLive(app: App, em: EntityManager, rawUserCode: string): Promise<IDeviceCode> {
  const userCode = normalizeUserCode(rawUserCode);
  const row = userCode ? await em.findOne(DeviceCode, { userCode }) : null;
  if (!row) throw new AuthError("INVALID_USER_CODE");
  if (row.expiresAt.getTime() <= app.clock.now().getTime()) throw new AuthError("EXPIRED_USER_CODE");
  return row;
}

/** GET /device: the code's status; a signed-in caller claims an unclaimed pending code. */
export async function verify(app: App, em: EntityManager, rawUserCode: string, userId: string | null) {
  const row = await findLive(app, em, rawUserCode);
  if (userId && !row.user && row.status === "pending") {
    // Only the first claimer wins; approve and deny then need that user.
    await em.nativeUpdate(DeviceCode, { id: row.id, user: null, status: "pending" }, { user: userId });
  }
  return { user_code: formatUserCode(row.userCode), status: row.status as Status };
}

/** POST /device/approve and /device/deny: the signed-in claimer decides, once. */
export async function decide(app: App, em: EntityManager, rawUserCode: string, userId: string, decision: "approved" | "denied") {
  const row = await findLive(app, em, rawUserCode);
  if (row.status !== "pending") throw new AuthError("DEVICE_CODE_ALREADY_PROCESSED");
  if (!row.user) throw new AuthError("DEVICE_CODE_NOT_CLAIMED");
  if (row.user.id !== userId) throw new AuthError("DEVICE_CODE_CLAIMED_BY_ANOTHER_USER");
  if (decision === "approved") {
    // Fresh from the database: a ban made elsewhere may not have reached this instance's session cache.
    const user = await em.findOne(User, { id: userId });
    if (!user || isBanActive(userRow(user), app.clock.now())) throw bannedUser(app);
  }
  const updated = await em.nativeUpdate(DeviceCode, { id: row.id, status: "pending", user: userId }, { status: decision });
  if (updated !== 1) throw new AuthError("DEVICE_CODE_ALREADY_PROCESSED");
  return { success: true as const };
}
