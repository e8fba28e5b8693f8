import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from "../../crypto/password.ts";
import { User } from "../../db/entities/index.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { lockBanState } from "../../db/ban-lock.ts";
import { inTransaction } from "../../db/transaction.ts";
import { mapUniqueViolation } from "../../db/unique.ts";
import { AuthError } from "../../errors.ts";
import {
  bannedUser, checkPasswordLength, hasSecondStep, insertSessionUnlessBanned, isBanActive, issueSession, newSession, newUserRow, parseEmail, parseUsername, type RequestInfo, secondStep, sendsVerificationOnSignUp, sendVerificationLater, type SignedIn, userChanged, writeSignUp,
} from "../../core/index.ts";
import { equalizeFailedCheck, upgradePasswordHash } from "./legacy-hashes.ts";

export interface SignUpInput {
  name: string;
  email: string;
  password: string;
  username?: string | undefined;
  displayUsername?: string | undefined;
  image?: string | null | undefined;
  rememberMe?: boolean | undefined;
  /** Lands in the verification link when sign-up mails one. */
  callbackURL?: string | undefined;
}

/** The request id (set by the HTTP layer) tags the log line of a failed verification send; Accept-Language sets its locale. */
type RequestMeta = RequestInfo & { requestId?: string; acceptLanguage?: string | null };

export async function signUp(app: App, req: RequestMeta, input: SignUpInput): Promise<SignedIn> {
  const { config } = app;
  if (!config.emailAndPassword.enableSignup) throw new AuthError("EMAIL_PASSWORD_SIGN_UP_DISABLED");
  const email = parseEmail(input.email);
  checkPasswordLength(config, input.password);
  const username = input.username === undefined ? null : parseUsername(input.username);
  const passwordHash = await hashPassword(input.password);
  const now = app.clock.now();
  const needsVerification = config.emailAndPassword.requireEmailVerification;

  const user = newUserRow(
    {
      email,
      emailVerified: false,
      name: input.name,
      image: input.image ?? null,
      username,
      displayUsername: input.displayUsername ?? input.username,
      role: config.admin.defaultRole,
    },
    now,
  );
  // One write (session store: prepared statements, no ORM): the ORM's query building cost more
  // main-thread time than the rest of sign-up.
  const issued = needsVerification ? null : newSession(app, req, { userId: user.id, rememberMe: input.rememberMe });
  await mapUniqueViolation(() => writeSignUp(app, user, { id: randomUUID(), passwordHash }, issued));
  const result: SignedIn = issued ? { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, user } : { token: null, cookieMaxAgeSec: null, user };
  // After the commit, and after the response: the mail never waits on (or undoes) the sign-up.
  if (sendsVerificationOnSignUp(config)) sendVerificationLater(app, req, result.user, input.callbackURL);
  return result;
}

type Failure = "INVALID_EMAIL_OR_PASSWORD" | "INVALID_USERNAME_OR_PASSWORD";

/**
 * Password check, then the account rules, then a session. An unknown user costs one argon2
 * verify against a dummy hash, like a wrong password (no enumeration by timing). `em` makes the
 * request's EntityManager, only when the sign-in needs a transaction (the common path does not).
 */
export async function signInWithPassword(
  app: App,
  em: () => EntityManager,
  req: RequestMeta,
  where: { email: string } | { username: string },
  password: string,
  opts: { rememberMe: boolean | undefined; failure: Failure; callbackURL: string | undefined; trustCookie: string | null },
): Promise<SignedIn> {
  const { rememberMe, failure, callbackURL } = opts;
  // Prepared lookup (src/db/session-store): the ORM's query building cost more than the rest of sign-in's main-thread work.
  const [field, value] = "email" in where ? (["email", where.email] as const) : (["username", where.username] as const);
  const credential = await app.sessions.findCredential(field, value);
  if (credential && req.signInAttempt) req.signInAttempt.userId = credential.user.id; // the audit record's target (core/sign-in-audit.ts)
  if (!credential) {
    await verifyAgainstDummy(password);
    await equalizeFailedCheck(app, null, password);
    throw new AuthError(failure);
  }
  if (!(await verifyPassword(credential.passwordHash, password))) {
    await equalizeFailedCheck(app, credential.passwordHash, password);
    throw new AuthError(failure);
  }
  // An imported better-auth (scrypt) hash becomes argon2id now that we hold the password.
  if (needsRehash(credential.passwordHash)) await upgradePasswordHash(app, credential.user.id, credential.passwordHash, password, req.requestId);
  const { user } = credential;
  const now = app.clock.now();
  if (isBanActive(user, now)) throw bannedUser(app);
  if (app.config.emailAndPassword.requireEmailVerification && !user.emailVerified) {
    // A fresh link for whoever proved the password (at most one mail a minute per user).
    sendVerificationLater(app, req, user, callbackURL);
    throw new AuthError("EMAIL_NOT_VERIFIED");
  }
  // The password check took ~20 ms: a ban or a removal may have committed meanwhile. The common
  // case (no ban on record, no second step) is one statement that inserts the session only if
  // the user is not banned at that moment, reading the row FOR SHARE against a concurrent ban
  // (which locks it before ending sessions, see admin changeUser): either the ban came first and
  // we refuse, or it waits for our insert and then ends our session (session-store).
  if (!user.banned && !hasSecondStep(app, user)) {
    const issued = newSession(app, req, { userId: user.id, rememberMe });
    const outcome = await insertSessionUnlessBanned(app, issued, now);
    if (outcome === "banned") throw bannedUser(app);
    if (outcome === "gone") throw new AuthError(failure); // removed meanwhile
    return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, user, secondStep: { kind: "none", trustToken: null } };
  }
  // An expired ban still on record (lifted here) or a second step: the same guarantee, in a
  // transaction that reads the ban state FOR SHARE first.
  const signedIn = await inTransaction(em(), async (tx) => {
    const current = await lockBanState(tx, app.dialect, user.id);
    if (!current) throw new AuthError(failure); // removed meanwhile
    if (isBanActive(current, now)) throw bannedUser(app);
    let signedInUser: UserRow = user;
    if (current.banned) {
      // An expired ban lifts itself at the next sign-in, with the session in one transaction.
      await tx.nativeUpdate(User, { id: user.id }, { banned: false, banReason: null, banExpires: null, updatedAt: now });
      signedInUser = { ...user, banned: false, banReason: null, banExpires: null, updatedAt: now };
    }
    // Two-factor (docs/wire-contract.md §10): the password alone ends in a pending sign-in, not a session.
    const step = await secondStep(app, tx, user, "password", { rememberMe: rememberMe ?? true, trustCookie: opts.trustCookie });
    if (step.kind === "pending") return { token: null, cookieMaxAgeSec: null, user: signedInUser, secondStep: step };
    const issued = await issueSession(app, tx, req, { userId: user.id, rememberMe, amr: ["pwd"] });
    return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, user: signedInUser, secondStep: step };
  });
  if (user.banned) userChanged(app, em(), user.id);
  return signedIn;
}

interface SignInInput {
  password: string;
  rememberMe?: boolean | undefined;
  callbackURL?: string | undefined;
  /** The `trust_device` cookie, if the browser sent one. */
  trustCookie?: string | null;
}

export function signInEmail(app: App, em: () => EntityManager, req: RequestMeta, input: SignInInput & { email: string }) {
  const email = parseEmail(input.email);
  const opts = { rememberMe: input.rememberMe, failure: "INVALID_EMAIL_OR_PASSWORD" as const, callbackURL: input.callbackURL, trustCookie: input.trustCookie ?? null };
  return signInWithPassword(app, em, req, { email }, input.password, opts);
}

export async function signInUsername(app: App, em: () => EntityManager, req: RequestMeta, input: SignInInput & { username: string }) {
  const username = input.username.trim().toLowerCase();
  if (username.length === 0 || username.length > 64) {
    await verifyAgainstDummy(input.password);
    await equalizeFailedCheck(app, null, input.password);
    throw new AuthError("INVALID_USERNAME_OR_PASSWORD");
  }
  const opts = { rememberMe: input.rememberMe, failure: "INVALID_USERNAME_OR_PASSWORD" as const, callbackURL: input.callbackURL, trustCookie: input.trustCookie ?? null };
  return signInWithPassword(app, em, req, { username }, input.password, opts);
}

export async function isUsernameAvailable(em: EntityManager, raw: string): Promise<boolean> {
  const username = parseUsername(raw);
  return (await em.count(User, { username })) === 0;
}
