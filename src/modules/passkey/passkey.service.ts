import { randomUUID } from "node:crypto";
import { ForeignKeyConstraintViolationException, LockMode, UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Passkey, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import { bannedUser, isBanActive, type IssuedSession, issueSession, type RequestInfo, userChanged, userRow } from "../../core/index.ts";
import * as ceremony from "./passkey.ceremony.ts";
import { consumeChallenge, saveChallenge } from "./passkey.challenge.ts";
import { joinTransports, publicPasskey, relyingParty, splitTransports, webauthn, type PublicPasskey } from "./passkey.rules.ts";

/** better-auth's passkey plugin rules, with the differences of docs/wire-contract.md §10 (passkey.rules.ts, passkey.challenge.ts). */
type RequestMeta = RequestInfo & { requestId: string };

async function credentialsOf(em: EntityManager, userId: string) {
  const rows = await em.find(Passkey, { user: userId }, { fields: ["credentialId", "transports"], orderBy: { createdAt: "asc" } });
  return rows.map((p) => ({ id: p.credentialId, transports: splitTransports(p.transports) }));
}

export interface RegisterQuery {
  authenticatorAttachment?: "platform" | "cross-platform" | undefined;
  name?: string | undefined;
}

/**
 * L3 §5.4 creation options, as better-auth makes them: no attestation, the user's passkeys
 * excluded (§5.4.3: one credential per authenticator), a discoverable credential preferred so
 * that usernameless sign-in works (§6.1.2), and a random user handle per registration (better-auth's
 * choice; §14.6.1: it must not identify the user to the authenticator's other parties).
 */
export async function registrationOptions(app: App, em: EntityManager, user: UserRow, query: RegisterQuery) {
  const rp = relyingParty(app);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: query.name || user.email,
    userDisplayName: user.email,
    attestationType: "none",
    excludeCredentials: await credentialsOf(em, user.id),
    authenticatorSelection: {
      residentKey: "preferred",
      userVerification: "preferred",
      ...(query.authenticatorAttachment ? { authenticatorAttachment: query.authenticatorAttachment } : {}),
    },
  });
  const challengeToken = await saveChallenge(app, em, "registration", options.challenge, user.id);
  return { options, challengeToken };
}

/**
 * Registers the credential for the signed-in user who asked for the options. A credential id
 * already registered, to anyone (§7.1 step 26), is a failed registration like any other.
 */
export async function verifyRegistration(app: App, em: EntityManager, req: RequestMeta, userId: string, token: string | null, input: { response: unknown; name?: string | undefined }): Promise<PublicPasskey> {
  const challenge = await consumeChallenge(app, em, token, "registration");
  if (challenge.userId !== userId) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY");
  const info = await ceremony.verifyRegistration({ app, requestId: req.requestId }, input.response, challenge);
  const row = {
    id: randomUUID(),
    name: input.name || null,
    user: userId,
    credentialId: info.credential.id,
    publicKey: Buffer.from(info.credential.publicKey).toString("base64"),
    counter: info.credential.counter,
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    transports: joinTransports(info.transports),
    aaguid: info.aaguid,
    createdAt: app.clock.now(),
  };
  try {
    await em.insert(Passkey, row);
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new AuthError("FAILED_TO_VERIFY_REGISTRATION", { cause: err });
    // The user was deleted meanwhile (their session with them).
    if (err instanceof ForeignKeyConstraintViolationException) throw new AuthError("UNAUTHORIZED", { cause: err });
    throw err;
  }
  return publicPasskey(row);
}

/**
 * L3 §5.5 request options. Signed in: that user's credentials (better-auth's behaviour);
 * otherwise none, so the authenticator offers its discoverable credentials (§6.1.2).
 */
export async function authenticationOptions(app: App, em: EntityManager, userId: string | null) {
  const allowCredentials = userId ? await credentialsOf(em, userId) : [];
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(app).id,
    userVerification: "preferred",
    ...(allowCredentials.length ? { allowCredentials } : {}),
  });
  const challengeToken = await saveChallenge(app, em, "authentication", options.challenge, userId);
  return { options, challengeToken };
}

export interface PasskeySignIn extends IssuedSession {
  user: UserRow;
}

/**
 * Sign-in with a passkey: the challenge is used up first, then the credential is looked up and
 * its assertion verified. A passkey is possession plus (usually) user verification: it needs no
 * second factor, as in better-auth.
 */
export async function verifyAuthentication(app: App, em: EntityManager, req: RequestMeta, token: string | null, raw: unknown): Promise<PasskeySignIn> {
  const challenge = await consumeChallenge(app, em, token, "authentication");
  const call = { app, requestId: req.requestId };
  const response = ceremony.parseAssertion(call, raw);
  const passkey = await em.findOne(Passkey, { credentialId: response.id }, { disableIdentityMap: true });
  if (!passkey) throw new AuthError("PASSKEY_NOT_FOUND");
  const verified = await ceremony.verifyAssertion(call, response, passkey, challenge);
  const now = app.clock.now();
  const signedIn = await inTransaction(em, async (tx) => {
    // Compare-and-set on the counter: of two assertions verified against the same stored counter, one moves it.
    const moved = await tx.nativeUpdate(Passkey, { id: passkey.id, counter: passkey.counter }, { counter: verified.newCounter, backedUp: verified.backedUp });
    if (moved !== 1) throw new AuthError("AUTHENTICATION_FAILED");
    return issueForUser(app, tx, req, passkey.user.id, now);
  });
  if (signedIn.liftedBan) userChanged(app, em, signedIn.user.id);
  return signedIn;
}

/**
 * The user row read FOR SHARE (PostgreSQL) in the transaction that issues the session, as the
 * other sign-in paths do: a concurrent ban either commits first and is seen, or waits and then
 * ends this session. An expired ban is lifted, as at a password sign-in.
 */
async function issueForUser(app: App, tx: EntityManager, req: RequestInfo, userId: string, now: Date) {
  const user = await tx.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_READ, disableIdentityMap: true });
  if (!user) throw new AuthError("PASSKEY_NOT_FOUND");
  let row = userRow(user);
  if (isBanActive(row, now)) throw bannedUser(app);
  const liftedBan = row.banned;
  if (liftedBan) {
    await tx.nativeUpdate(User, { id: userId }, { banned: false, banReason: null, banExpires: null, updatedAt: now });
    row = { ...row, banned: false, banReason: null, banExpires: null, updatedAt: now };
  }
  const issued = await issueSession(app, tx, req, { userId, amr: ["hwk"] });
  return { ...issued, user: row, liftedBan };
}

export async function listPasskeys(em: EntityManager, userId: string): Promise<PublicPasskey[]> {
  const rows = await em.find(Passkey, { user: userId }, { orderBy: { createdAt: "asc", id: "asc" }, disableIdentityMap: true });
  return rows.map(publicPasskey);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Owner in the WHERE clause: someone else's passkey and an unknown id are the same 401
 * PASSKEY_NOT_FOUND (better-auth tells them apart, 404 and 401: an existence oracle).
 */
export async function deletePasskey(em: EntityManager, userId: string, id: string): Promise<void> {
  const deleted = UUID.test(id) ? await em.nativeDelete(Passkey, { id, user: userId }) : 0;
  if (deleted !== 1) throw new AuthError("PASSKEY_NOT_FOUND");
}

export async function renamePasskey(em: EntityManager, userId: string, id: string, name: string): Promise<PublicPasskey> {
  if (!UUID.test(id)) throw new AuthError("PASSKEY_NOT_FOUND");
  return inTransaction(em, async (tx) => {
    const updated = await tx.nativeUpdate(Passkey, { id, user: userId }, { name });
    const row = updated === 1 ? await tx.findOne(Passkey, { id, user: userId }, { disableIdentityMap: true }) : null;
    if (!row) throw new AuthError("PASSKEY_NOT_FOUND");
    return publicPasskey(row);
  });
}
