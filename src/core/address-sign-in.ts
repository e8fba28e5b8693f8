import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { User } from "../db/entities/index.ts";
import type { SessionRow } from "../db/session-store/index.ts";
import { LockMode, UniqueConstraintViolationException } from "../db/mikro-orm.ts";
import { inTransaction } from "../db/transaction.ts";
import { AuthError, type ErrorCode } from "../errors.ts";
import { recordAudit, type AuditAction } from "./audit.ts";
import { addressProven } from "./holdings.ts";
import { secondStep, type SignedIn } from "./sign-in-gate.ts";
import { userChanged } from "./session/revoke.ts";
import { type AuthMethod, bannedUser, isBanActive, issueSession, type RequestInfo } from "./session/sessions.ts";
import { newUserRow, userRow } from "./session/view.ts";

/**
 * THE sign-in by a proven address (docs/passwordless.md): a magic link or a mailed code shows
 * that the caller reads the mailbox, which is the first factor. One transaction uses the proof
 * up, finds or creates the user, applies the takeover rule, passes the sign-in gate and issues
 * the session, so a refusal (a ban, sign-up off) leaves the proof usable and nothing half-written.
 */

/**
 * A mailed code or link is a one-time secret sent to the address: RFC 8176 `otp` (the registry
 * has no value for email; docs/oidc-provider.md "acr and amr").
 */
const ADDRESS_PROOF: readonly AuthMethod[] = ["otp"];

/** What a proof says: the address it was mailed to, and what a first sign-in creates the account with. */
export interface ProvenAddress {
  /** Normalised (lower-cased) when the proof was issued. */
  email: string;
  name?: string | undefined;
  image?: string | null | undefined;
}

export interface AddressSignInOptions {
  /** Create an account for an address that has none; else `noAccount` is the answer. */
  signUp: boolean;
  noAccount: ErrorCode;
  /** The answer when `consume` finds no live proof. */
  invalidProof: ErrorCode;
  /** The audit record of the sign-in (the way in). */
  audit: AuditAction;
  /** The `trust_device` cookie, if the browser sent one (the gate's trusted device). */
  trustCookie: string | null;
}

export interface AddressSignIn extends SignedIn {
  isNewUser: boolean;
  /** The new session's row; null for a pending second step. */
  session: SessionRow | null;
}

async function resolve(
  app: App,
  tx: EntityManager,
  req: RequestInfo,
  opts: AddressSignInOptions,
  consume: (tx: EntityManager) => Promise<ProvenAddress | null>,
): Promise<AddressSignIn> {
  const proven = await consume(tx);
  if (!proven) throw new AuthError(opts.invalidProof);
  const now = app.clock.now();
  // FOR SHARE (PostgreSQL), as every sign-in: a concurrent ban commits first and is seen, or waits and ends this session.
  const existing = await tx.findOne(User, { email: proven.email }, { lockMode: LockMode.PESSIMISTIC_READ, disableIdentityMap: true });
  const actor = { impersonatorId: null, ip: req.ip, userAgent: req.userAgent };
  if (!existing) {
    if (!opts.signUp) throw new AuthError(opts.noAccount);
    const fields = { email: proven.email, emailVerified: true, name: proven.name ?? "", image: proven.image ?? null, username: null, displayUsername: null, role: app.config.admin.defaultRole };
    const user = newUserRow(fields, now);
    await tx.insert(User, user);
    const issued = await issueSession(app, tx, req, { userId: user.id, amr: ADDRESS_PROOF });
    await recordAudit(tx, app.clock, { ...actor, userId: user.id }, { action: opts.audit, targetType: "user", targetId: user.id, metadata: { newUser: true } });
    return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, session: issued.session, user, isNewUser: true, secondStep: { kind: "none", trustToken: null } };
  }
  let user = userRow(existing);
  if (isBanActive(user, now)) throw bannedUser(app);
  if (user.banned) {
    // An expired ban lifts itself at the next sign-in, as at a password sign-in.
    await tx.nativeUpdate(User, { id: user.id }, { banned: false, banReason: null, banExpires: null, updatedAt: now });
    userChanged(app, tx, user.id);
    user = { ...user, banned: false, banReason: null, banExpires: null, updatedAt: now };
  }
  const tookOver = await addressProven(app, tx, user, "all");
  // A takeover removed a squatter's two-factor enrollment with everything else.
  if (tookOver) user = { ...user, emailVerified: true, twoFactorEnabled: false, updatedAt: now };
  const step = await secondStep(app, tx, user, "passwordless", { rememberMe: true, trustCookie: opts.trustCookie });
  const metadata = { newUser: false, unprovenAccessRemoved: tookOver, ...(step.kind === "pending" ? { secondStep: "pending" } : {}) };
  await recordAudit(tx, app.clock, { ...actor, userId: user.id }, { action: opts.audit, targetType: "user", targetId: user.id, metadata });
  if (step.kind === "pending") return { token: null, cookieMaxAgeSec: null, session: null, user, isNewUser: false, secondStep: step };
  const issued = await issueSession(app, tx, req, { userId: user.id, amr: ADDRESS_PROOF });
  return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, session: issued.session, user, isNewUser: false, secondStep: step };
}

/**
 * Signs in whoever holds the proof `consume` uses up. A first sign-in racing another sign-up for
 * the same address loses at the unique index and rolls back (the proof with it); once more, it
 * then finds the winner's account and signs in to it (taking it over when its address is unproven).
 */
export async function signInByAddress(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  opts: AddressSignInOptions,
  consume: (tx: EntityManager) => Promise<ProvenAddress | null>,
): Promise<AddressSignIn> {
  const attempt = () => inTransaction(em, (tx) => resolve(app, tx, req, opts, consume));
  try {
    return await attempt();
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    return attempt();
  }
}
