import { randomUUID } from "node:crypto";
import type { IAccount, IUser } from "../../db/entities/index.ts";
import { splitScopes } from "../../social-providers/provider.ts";
import type { SessionRow, SessionWithUser, UserRow } from "../../db/session-store/index.ts";

/*
 * THE user and session views: the row every part of the service passes around (UserRow: the
 * session store's shape, nulls where the entity has undefined) and the records every response
 * carries (docs/wire-contract.md §2). Hand-written: hot path, no output schema.
 */

/** An entity as the row the session core and the responses use. */
export function userRow(u: IUser): UserRow {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    emailVerified: u.emailVerified,
    image: u.image ?? null,
    username: u.username ?? null,
    displayUsername: u.displayUsername ?? null,
    role: u.role,
    banned: u.banned,
    banReason: u.banReason ?? null,
    banExpires: u.banExpires ?? null,
    twoFactorEnabled: u.twoFactorEnabled,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

export interface NewUserFields {
  email: string;
  name: string;
  image: string | null;
  /** Normalised (lower-cased) username, or null. */
  username: string | null;
  /** As the user typed it; kept only with a username. */
  displayUsername: string | null | undefined;
  role: string;
  emailVerified: boolean;
}

/** A new user's row (sign-up, admin create-user): a fresh id, not banned, no second factor, created now. */
export function newUserRow(fields: NewUserFields, now: Date): UserRow {
  return {
    id: randomUUID(),
    ...fields,
    displayUsername: fields.username === null ? null : (fields.displayUsername ?? null),
    banned: false,
    banReason: null,
    banExpires: null,
    twoFactorEnabled: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** The user record every response carries (docs/wire-contract.md §2), from the row (userRow turns an entity into one). */
export function publicUser(u: UserRow) {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    emailVerified: u.emailVerified,
    image: u.image ?? null,
    username: u.username ?? null,
    displayUsername: u.displayUsername ?? null,
    role: u.role,
    banned: u.banned,
    banReason: u.banReason ?? null,
    banExpires: u.banExpires ? u.banExpires.toISOString() : null,
    twoFactorEnabled: u.twoFactorEnabled,
    createdAt: u.createdAt.toISOString(),
    updatedAt: u.updatedAt.toISOString(),
  };
}

export type PublicUser = ReturnType<typeof publicUser>;

export function publicSession(s: SessionRow) {
  return {
    id: s.id,
    userId: s.userId,
    expiresAt: s.expiresAt.toISOString(),
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    impersonatedBy: s.impersonatedBy ?? null,
    activeOrganizationId: s.activeOrganizationId ?? null,
    activeTeamId: s.activeTeamId ?? null,
  };
}

export type PublicSession = ReturnType<typeof publicSession>;

/** The get-session body (docs/wire-contract.md §2): the session with the presented token, and its user. */
export function sessionBody(value: SessionWithUser, token: string) {
  return { session: { ...publicSession(value.session), token }, user: publicUser(value.user) };
}

export type SessionBody = ReturnType<typeof sessionBody>;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
/** The end of year 9999: toISOString writes later years with a sign and six digits. */
const ISO_MAX_MS = 253_402_300_799_999;

/**
 * `new Date(ms).toISOString()` without the Date and the runtime call (0.4 µs each, five per
 * answer): days to a civil date by Howard Hinnant's `civil_from_days`. Before 1970 and after
 * 9999 (and for NaN, which throws) it defers to toISOString. A property test holds it equal to toISOString.
 */
export function isoString(ms: number): string {
  if (!(ms >= 0 && ms <= ISO_MAX_MS)) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  let rest = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

const str = JSON.stringify;
const optStr = (v: string | null | undefined) => (v == null ? "null" : str(v));
const optIso = (d: Date | null) => (d ? `"${isoString(d.getTime())}"` : "null");

/**
 * `JSON.stringify(sessionBody(value, token))`, written directly: no intermediate objects, no
 * Date formatting by the runtime. The per-request cost of a get-session answered from the
 * database (an uncached check builds one). A property test holds the two equal.
 */
export function sessionJson({ session: s, user: u }: SessionWithUser, token: string): string {
  return (
    `{"session":{"id":${str(s.id)},"userId":${str(s.userId)},"expiresAt":"${isoString(s.expiresAt.getTime())}",` +
    `"createdAt":"${isoString(s.createdAt.getTime())}","updatedAt":"${isoString(s.updatedAt.getTime())}",` +
    `"ipAddress":${optStr(s.ipAddress)},"userAgent":${optStr(s.userAgent)},"impersonatedBy":${optStr(s.impersonatedBy)},` +
    `"activeOrganizationId":${optStr(s.activeOrganizationId)},"activeTeamId":${optStr(s.activeTeamId)},"token":${str(token)}},` +
    `"user":{"id":${str(u.id)},"name":${str(u.name)},"email":${str(u.email)},"emailVerified":${u.emailVerified},` +
    `"image":${optStr(u.image)},"username":${optStr(u.username)},"displayUsername":${optStr(u.displayUsername)},` +
    `"role":${str(u.role)},"banned":${u.banned},"banReason":${optStr(u.banReason)},"banExpires":${optIso(u.banExpires)},` +
    `"twoFactorEnabled":${u.twoFactorEnabled},"createdAt":"${isoString(u.createdAt.getTime())}","updatedAt":"${isoString(u.updatedAt.getTime())}"}}`
  );
}

/** A linked account as listings show it (docs/wire-contract.md §2): never a token or a password hash. */
export function publicAccount(a: IAccount) {
  return {
    id: a.id,
    providerId: a.providerId,
    accountId: a.accountId,
    userId: a.user.id,
    scopes: splitScopes(a.scope),
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}
