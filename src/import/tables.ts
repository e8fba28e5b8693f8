import type { EntityManager } from "@mikro-orm/core";
import type { ResolvedConfig } from "../config/index.ts";
import type { Aead } from "../crypto/aead.ts";
import { isBetterAuthHash } from "../crypto/password.ts";
import { sha256 } from "../crypto/tokens.ts";
import { isValidUsername, parseEmail } from "../core/identity.ts";
import { sealTokens } from "../modules/oauth/tokens.ts";
import { isSafeImageUrl } from "../security/image-url.ts";
import { argon2Refusal, toBool, toDate, toText } from "./convert.ts";
import { importedId } from "./ids.ts";
import type { SourceRow } from "./source.ts";
import type { ImportedTable } from "./summary.ts";

export type Mapped<T> = { row: T; notes?: string[] } | { skip: string } | { fail: string };

export interface MapContext {
  config: ResolvedConfig;
  aead: Aead;
  now: Date;
}

type TargetRow = { id: string } & Record<string, unknown>;

/** One better-auth table and how its rows become ours. */
export interface TableSpec {
  table: ImportedTable;
  /** Our entity, by name (entities/index.ts). */
  entity: "User" | "Account" | "Session" | "Verification";
  /** better-auth's core columns: a table without them is not better-auth's default schema. */
  required: readonly string[];
  /** Plugin columns (username, admin, two-factor), read when the table has them. */
  optional: readonly string[];
  map(row: SourceRow, ctx: MapContext): Mapped<TargetRow>;
  /** The Portcullis user a row belongs to: rows whose user is not there fail. */
  userOf?(row: TargetRow): string;
  /** Rows already in Portcullis under other ids that `rows` would collide with on a unique key: id → reason. */
  conflicts(tx: EntityManager, rows: TargetRow[]): Promise<Map<string, string>>;
}

/** Our address rules (lower-cased NFKC, RFC 5321 length, zod's format), or null. */
function importableEmail(raw: unknown): string | null {
  try {
    return parseEmail(String(raw ?? ""));
  } catch {
    return null;
  }
}

const find = (tx: EntityManager, entity: TableSpec["entity"], where: object, fields: string[]) =>
  tx.find(entity, where as never, { fields: fields as never, disableIdentityMap: true }) as Promise<Record<string, unknown>[]>;

const users: TableSpec = {
  table: "user",
  entity: "User",
  required: ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt"],
  optional: ["username", "displayUsername", "role", "banned", "banReason", "banExpires", "twoFactorEnabled"],
  map(r, { config, now }) {
    const email = importableEmail(r.email);
    if (email === null) return { fail: "invalid email address" };
    const notes: string[] = [];
    let image = toText(r.image);
    if (image !== null && !isSafeImageUrl(image)) {
      image = null;
      notes.push("image dropped: not an absolute http(s) URL");
    }
    let username = toText(r.username)?.toLowerCase() ?? null;
    if (username !== null && !isValidUsername(username)) {
      username = null;
      notes.push("username dropped: not 3-30 letters, digits, _ or .");
    }
    const role = toText(r.role) ?? config.admin.defaultRole;
    for (const name of role.split(",").map((s) => s.trim()).filter(Boolean)) {
      if (!Object.hasOwn(config.admin.roles, name)) notes.push(`role "${name}" is not defined in admin.roles`);
    }
    let twoFactorEnabled = toBool(r.twoFactorEnabled);
    if (twoFactorEnabled && config.twoFactor.enabled) {
      if (config.twoFactor.otp.enabled) notes.push("two-factor on: TOTP not imported, the second step is the emailed code until the user enrolls again");
      else {
        twoFactorEnabled = false;
        notes.push("two-factor turned off: TOTP not imported and twoFactor.otp is off (the user could not finish a sign-in)");
      }
    }
    const createdAt = toDate(r.createdAt) ?? now;
    return {
      row: {
        id: importedId(String(r.id)),
        email,
        emailVerified: toBool(r.emailVerified),
        name: String(r.name ?? "").slice(0, 1024),
        image,
        username,
        displayUsername: username === null ? null : (toText(r.displayUsername)?.slice(0, 64) ?? username),
        role,
        banned: toBool(r.banned),
        banReason: toText(r.banReason),
        banExpires: toDate(r.banExpires),
        twoFactorEnabled,
        createdAt,
        updatedAt: toDate(r.updatedAt) ?? createdAt,
      },
      notes,
    };
  },
  async conflicts(tx, rows) {
    const emails = rows.map((r) => r.email as string);
    const usernames = rows.map((r) => r.username as string | null).filter((u): u is string => u !== null);
    const where = usernames.length > 0 ? { $or: [{ email: { $in: emails } }, { username: { $in: usernames } }] } : { email: { $in: emails } };
    const found = await find(tx, "User", where, ["id", "email", "username"]);
    const byEmail = new Set(found.map((u) => u.email));
    const byUsername = new Set(found.map((u) => u.username).filter(Boolean));
    const out = new Map<string, string>();
    for (const r of rows) {
      if (byEmail.has(r.email)) out.set(r.id, "email already belongs to another Portcullis user");
      else if (r.username !== null && byUsername.has(r.username)) out.set(r.id, "username already belongs to another Portcullis user");
    }
    return out;
  },
};

const accounts: TableSpec = {
  table: "account",
  entity: "Account",
  required: ["id", "accountId", "providerId", "userId", "accessToken", "refreshToken", "idToken", "accessTokenExpiresAt", "refreshTokenExpiresAt", "scope", "password", "createdAt", "updatedAt"],
  optional: [],
  map(r, { aead, now }) {
    const id = importedId(String(r.id));
    const userId = importedId(String(r.userId));
    const providerId = String(r.providerId);
    const credential = providerId === "credential";
    const password = toText(r.password);
    if (credential) {
      if (password === null) return { fail: "credential account without a password hash" };
      // better-auth's scrypt (kept, re-hashed at the first sign-in) or an argon2 hash from a custom `password.hash`.
      if (!isBetterAuthHash(password) && !password.startsWith("$argon2")) return { fail: "password hash format not supported (the user can reset the password)" };
      const refusal = password.startsWith("$argon2") ? argon2Refusal(password) : null;
      if (refusal) return { fail: refusal };
    }
    const sealed = sealTokens(
      aead,
      id,
      { accessToken: toText(r.accessToken), refreshToken: toText(r.refreshToken), idToken: toText(r.idToken), expiresInSec: null, refreshTokenExpiresInSec: null, scope: toText(r.scope) },
      null,
      now,
    );
    const createdAt = toDate(r.createdAt) ?? now;
    return {
      row: {
        id,
        user: userId,
        providerId,
        // Ours: a credential account's accountId is its user's id.
        accountId: credential ? userId : String(r.accountId),
        password: credential ? password : null,
        accessToken: sealed.accessToken ?? null,
        refreshToken: sealed.refreshToken ?? null,
        idToken: sealed.idToken ?? null,
        accessTokenExpiresAt: sealed.accessToken ? toDate(r.accessTokenExpiresAt) : null,
        refreshTokenExpiresAt: sealed.refreshToken ? toDate(r.refreshTokenExpiresAt) : null,
        scope: sealed.scope ?? null,
        createdAt,
        updatedAt: toDate(r.updatedAt) ?? createdAt,
      },
    };
  },
  userOf: (row) => row.user as string,
  async conflicts(tx, rows) {
    const found = await find(tx, "Account", { $or: rows.map((r) => ({ providerId: r.providerId, accountId: r.accountId })) }, ["id", "providerId", "accountId"]);
    const taken = new Set(found.map((a) => `${a.providerId}\0${a.accountId}`));
    const out = new Map<string, string>();
    for (const r of rows) {
      if (!taken.has(`${r.providerId}\0${r.accountId}`)) continue;
      out.set(r.id, r.providerId === "credential" ? "the user already has a password in Portcullis" : "provider account already linked in Portcullis");
    }
    return out;
  },
};

const sessions: TableSpec = {
  table: "session",
  entity: "Session",
  required: ["id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId"],
  optional: ["impersonatedBy"],
  map(r, { now }) {
    const expiresAt = toDate(r.expiresAt);
    if (!expiresAt || expiresAt.getTime() <= now.getTime()) return { skip: "expired" };
    const token = String(r.token ?? "");
    // Our session check ignores tokens shorter than 20 characters (better-auth's are 32).
    if (token.length < 20 || token.length > 200) return { fail: "token length outside 20-200 characters" };
    const impersonatedBy = toText(r.impersonatedBy);
    const createdAt = toDate(r.createdAt) ?? now;
    return {
      row: {
        id: importedId(String(r.id)),
        // Stored as ours are: the SHA-256 of the token, never the token.
        tokenHash: sha256(token),
        user: importedId(String(r.userId)),
        expiresAt,
        rememberMe: true,
        ipAddress: toText(r.ipAddress)?.slice(0, 64) ?? null,
        userAgent: toText(r.userAgent),
        impersonatedBy: impersonatedBy === null ? null : importedId(impersonatedBy),
        createdAt,
        updatedAt: toDate(r.updatedAt) ?? createdAt,
      },
    };
  },
  userOf: (row) => row.user as string,
  async conflicts(tx, rows) {
    const found = await find(tx, "Session", { tokenHash: { $in: rows.map((r) => r.tokenHash) } }, ["id", "tokenHash"]);
    const taken = new Set(found.map((s) => s.tokenHash));
    return new Map(rows.filter((r) => taken.has(r.tokenHash)).map((r) => [r.id, "the same token is already a Portcullis session"]));
  },
};

/**
 * better-auth's mailed single-use tokens that have a Portcullis twin: the reset link
 * (`reset-password:<token>`, value the user id) and the account deletion link
 * (`delete-account-<token>`). Both links keep their paths here, so a mail already sent still works.
 */
const MAILED_TOKENS: { prefix: string; purpose: string }[] = [
  { prefix: "reset-password:", purpose: "password-reset" },
  { prefix: "delete-account-", purpose: "delete-account" },
];

function unmappedVerification(identifier: string, value: string): string {
  if (identifier.startsWith("2fa-otp-") || identifier.startsWith("trust-device-")) return "two-factor state (short-lived)";
  if (/^(sign-in|email-verification|forget-password|change-email)-otp-/.test(identifier)) return "email-otp plugin code (not a Portcullis feature)";
  if (value.includes('"codeVerifier"')) return "OAuth sign-in in flight (expires within minutes)";
  return "no Portcullis equivalent (or the identifier is stored hashed)";
}

const verifications: TableSpec = {
  table: "verification",
  entity: "Verification",
  required: ["id", "identifier", "value", "expiresAt", "createdAt"],
  optional: [],
  map(r, { now }) {
    const expiresAt = toDate(r.expiresAt);
    if (!expiresAt || expiresAt.getTime() <= now.getTime()) return { skip: "expired" };
    const identifier = String(r.identifier ?? "");
    const value = String(r.value ?? "");
    const kind = MAILED_TOKENS.find((k) => identifier.startsWith(k.prefix));
    if (!kind) return { skip: unmappedVerification(identifier, value) };
    const token = identifier.slice(kind.prefix.length);
    if (token.length < 20 || token.length > 200) return { fail: "token length outside 20-200 characters" };
    return {
      row: {
        id: importedId(String(r.id)),
        identifier: sha256(token),
        purpose: kind.purpose,
        value: JSON.stringify({ userId: importedId(value) }),
        expiresAt,
        createdAt: toDate(r.createdAt) ?? now,
      },
    };
  },
  userOf: (row) => (JSON.parse(row.value as string) as { userId: string }).userId,
  async conflicts(tx, rows) {
    const found = await find(tx, "Verification", { identifier: { $in: rows.map((r) => r.identifier) } }, ["id", "identifier"]);
    const taken = new Set(found.map((v) => v.identifier));
    return new Map(rows.filter((r) => taken.has(r.identifier)).map((r) => [r.id, "the same token is already in Portcullis"]));
  },
};

/** In dependency order: users first, everything else points at them. */
export const TABLES: readonly TableSpec[] = [users, accounts, sessions, verifications];

/** better-auth tables (its plugins') that have no import: their rows are counted in the summary. */
export const NOT_IMPORTED: { table: string; reason: string }[] = [
  { table: "twoFactor", reason: "TOTP secrets and backup codes are sealed with better-auth's secret: users enroll again (the emailed code works meanwhile)" },
  { table: "passkey", reason: "passkeys are not imported: users register them again" },
  { table: "deviceCode", reason: "device codes live minutes: not imported" },
];
