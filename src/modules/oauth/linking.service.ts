import { randomUUID } from "node:crypto";
import { LockMode, UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Account, User, type IAccount, type IUser } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { mapUniqueViolation } from "../../db/unique.ts";
import { AuthError } from "../../errors.ts";
import type { OAuthProvider, StandardUserInfo } from "../../social-providers/index.ts";
import { addressProven, bannedUser, isBanActive, issueSession, type RequestInfo, secondStep, type SecondStep, userChanged, userRow } from "../../core/index.ts";
import { oauthRuntime } from "./runtime.ts";
import { openTokens, resealKept, sealTokens, type GrantedTokens } from "./tokens.ts";

/** A provider's answer at the callback (or a verified ID token): who the user is there, and the tokens it issued. */
export interface ProviderLogin {
  provider: OAuthProvider;
  /** Email already normalized (lower-cased, docs/wire-contract.md §2). */
  profile: StandardUserInfo;
  tokens: GrantedTokens;
  /** What the flow asked for; null when unknown (an ID token): the stored scope then stays. */
  requestedScopes: string[] | null;
}

const requestedScope = (login: ProviderLogin) => login.requestedScopes?.join(" ") ?? null;

export interface SocialSignIn {
  userId: string;
  /** null: a pending two-factor sign-in instead (`twoFactor.enforceOnSocial`). */
  token: string | null;
  cookieMaxAgeSec: number | null;
  isNewUser: boolean;
  secondStep?: SecondStep;
}

/**
 * A session for a social sign-in; or, with `twoFactor.enforceOnSocial` and two-factor on for the
 * user, a pending sign-in the second step completes (better-auth asks none after OAuth).
 */
async function startSession(app: App, tx: EntityManager, req: RequestInfo, user: { id: string; twoFactorEnabled: boolean }) {
  const step = await secondStep(app, tx, user, "social", { rememberMe: true, trustCookie: null });
  if (step.kind === "pending") return { token: null, cookieMaxAgeSec: null, secondStep: step };
  // RFC 8176 has no value for a sign-in vouched for by another provider: none, not a guess.
  const issued = await issueSession(app, tx, req, { userId: user.id, amr: [] });
  return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec };
}

/** The provider vouches for the address: it says so, or the operator trusts it (`trustedProviders`). */
function emailProven(app: App, login: ProviderLogin): boolean {
  return login.profile.emailVerified || app.config.trustedProviders.includes(login.provider.name);
}

/** 403 BANNED_USER for an active ban (docs/wire-contract.md §4); true when an expired ban is still on record. */
function checkBan(app: App, user: IUser, now: Date): boolean {
  if (isBanActive(userRow(user), now)) throw bannedUser(app);
  return user.banned;
}

/**
 * The user row, read FOR SHARE (PostgreSQL; SQLite runs one writer at a time) in the
 * transaction that issues the session: a concurrent ban, which locks the row before ending
 * sessions, either commits first and is seen here, or waits and then ends this session too.
 */
function findUserLocked(tx: EntityManager, where: { id: string } | { email: string }): Promise<IUser | null> {
  return tx.findOne(User, where, { lockMode: LockMode.PESSIMISTIC_READ, disableIdentityMap: true });
}

async function insertAccount(app: App, tx: EntityManager, userId: string, login: ProviderLogin, now: Date): Promise<void> {
  const id = randomUUID();
  await tx.insert(Account, {
    id,
    user: userId,
    providerId: login.provider.name,
    accountId: login.profile.id,
    password: null,
    ...sealTokens(oauthRuntime(app).aead, id, login.tokens, requestedScope(login), now),
    createdAt: now,
    updatedAt: now,
  });
}

async function updateTokens(app: App, tx: EntityManager, account: IAccount, login: ProviderLogin, now: Date): Promise<void> {
  const { aead } = oauthRuntime(app);
  const sealed = sealTokens(aead, account.id, login.tokens, requestedScope(login), now);
  // Kept refresh/id tokens move to the newest key too (secret rotation); ones sealed under a
  // retired secret no longer open and are left as they are (the next grant replaces them).
  let kept = {};
  try {
    kept = resealKept(aead, account.id, login.tokens, openTokens(aead, account));
  } catch {
    kept = {};
  }
  await tx.nativeUpdate(Account, { id: account.id }, { ...sealed, ...kept, updatedAt: now });
}

/** Lifts an expired ban (like password sign-in) and marks the email verified; true when the row changed. */
async function updateUser(tx: EntityManager, userId: string, change: { liftsBan: boolean; verifies: boolean }, now: Date): Promise<boolean> {
  if (!change.liftsBan && !change.verifies) return false;
  await tx.nativeUpdate(User, { id: userId }, {
    ...(change.liftsBan ? { banned: false, banReason: null, banExpires: null } : {}),
    ...(change.verifies ? { emailVerified: true } : {}),
    updatedAt: now,
  });
  return true;
}

/**
 * Uniqueness is the database's (docs/architecture.md style 7). Two callbacks for one provider
 * account, or a sign-up racing a social sign-in for one email: one transaction hits the unique
 * index and rolls back, and the rules run once more, now seeing the winner's row (same user:
 * rule 1; another user: 409).
 */
async function withUniqueRetry<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  try {
    return await inTransaction(em, work, { savepoint: true });
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
  }
  try {
    return await mapUniqueViolation(() => inTransaction(em, work, { savepoint: true }));
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new AuthError("ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER", { cause: err });
    throw err;
  }
}

type Resolved = SocialSignIn & { userChanged: boolean };

/** docs/wire-contract.md §5, the seed's three rules with the linking-safety rule, in one transaction. */
async function resolveSignIn(app: App, tx: EntityManager, req: RequestInfo, login: ProviderLogin): Promise<Resolved> {
  const now = app.clock.now();
  const { provider, profile } = login;
  const proven = emailProven(app, login);
  const requireVerified = app.config.emailAndPassword.requireEmailVerification;

  const linked = await tx.findOne(Account, { providerId: provider.name, accountId: profile.id });
  const user = linked ? await findUserLocked(tx, { id: linked.user.id }) : null;
  if (linked && user) {
    // Rule 1: already linked: fresh tokens, new session.
    const liftsBan = checkBan(app, user, now);
    const verifies = proven && !user.emailVerified && user.email === profile.email;
    if (requireVerified && !user.emailVerified && !verifies) throw new AuthError("EMAIL_NOT_VERIFIED");
    await updateTokens(app, tx, linked, login, now);
    const userChanged = await updateUser(tx, user.id, { liftsBan, verifies }, now);
    return { userId: user.id, ...(await startSession(app, tx, req, user)), isNewUser: false, userChanged };
  }

  const existing = await findUserLocked(tx, { email: profile.email });
  if (existing) {
    // Rule 2, linking safety: only an address the provider vouches for links to a local user.
    if (!proven) throw new AuthError("ACCOUNT_NOT_LINKED");
    const liftsBan = checkBan(app, existing, now);
    // Pre-account-takeover defence (docs/wire-contract.md §5, core/holdings.ts addressProven): whoever
    // registered this address without proving it loses every way in, in this transaction: the
    // unverified password, sessions, device codes, mailed links, link flows, and every linked
    // account. No record says when an address stopped being verified, so every account of an
    // unverified user counts as linked while it was unverified.
    const takesOver = await addressProven(app, tx, existing, "all");
    await insertAccount(app, tx, existing.id, login, now);
    const userChanged = (await updateUser(tx, existing.id, { liftsBan, verifies: false }, now)) || takesOver;
    // A takeover removed the squatter's two-factor with everything else (core/holdings.ts).
    const twoFactorEnabled = existing.twoFactorEnabled && !takesOver;
    return { userId: existing.id, ...(await startSession(app, tx, req, { id: existing.id, twoFactorEnabled })), isNewUser: false, userChanged };
  }

  // Rule 3: a new user, emailVerified as the provider says.
  if (requireVerified && !proven) throw new AuthError("EMAIL_NOT_VERIFIED");
  const userId = randomUUID();
  await tx.insert(User, {
    id: userId,
    email: profile.email,
    emailVerified: proven,
    name: profile.name ?? "",
    image: profile.image,
    username: null,
    displayUsername: null,
    role: app.config.admin.defaultRole,
    banned: false,
    createdAt: now,
    updatedAt: now,
  });
  await insertAccount(app, tx, userId, login, now);
  const issued = await issueSession(app, tx, req, { userId, amr: [] });
  return { userId, token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, isNewUser: true, userChanged: false };
}

export async function signInWithProvider(app: App, em: EntityManager, req: RequestInfo, login: ProviderLogin): Promise<SocialSignIn> {
  const { userChanged: rowChanged, ...signedIn } = await withUniqueRetry(em, (tx) => resolveSignIn(app, tx, req, login));
  // Cached sessions carry the user row (a lifted ban, a verified address).
  if (rowChanged) userChanged(app, em, signedIn.userId);
  return signedIn;
}

/**
 * /link-social's callback: the provider account joins the signed-in user who started the flow,
 * whatever its email; 409 when it already belongs to someone else. No new session.
 */
export async function linkToUser(app: App, em: EntityManager, userId: string, login: ProviderLogin): Promise<void> {
  await withUniqueRetry(em, async (tx) => {
    const now = app.clock.now();
    const linked = await tx.findOne(Account, { providerId: login.provider.name, accountId: login.profile.id });
    if (linked) {
      if (linked.user.id !== userId) throw new AuthError("ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER");
      await updateTokens(app, tx, linked, login, now);
      return;
    }
    const user = await findUserLocked(tx, { id: userId });
    if (!user) throw new AuthError("USER_NOT_FOUND");
    checkBan(app, user, now);
    await insertAccount(app, tx, userId, login, now);
  });
}
