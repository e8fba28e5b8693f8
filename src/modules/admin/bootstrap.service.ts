import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { ResolvedConfig } from "../../config/index.ts";
import { hashPassword } from "../../crypto/password.ts";
import { Account, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { mapUniqueViolation } from "../../db/unique.ts";
import { type Actor, checkPasswordLength, credentialAccount, parseEmail, recordAudit } from "../../core/index.ts";

export interface CreateAdminInput {
  email: string;
  /** Or how to ask for it: asked only when the user has to be created (a promotion needs none). */
  password?: string | (() => Promise<string | undefined>) | undefined;
  name?: string | undefined;
}

export class BootstrapError extends Error {
  override name = "BootstrapError";
}

/** The operator at the console: audited with no actor. */
const CLI: Actor = { userId: null, impersonatorId: null, ip: null, userAgent: "portcullis create-admin" };

/**
 * `portcullis create-admin`: the first admin, with no admin to ask. Creates the user with the
 * first admin role and a credential account, or adds that role to an existing user (whose
 * password is left alone). The operator vouches for the address, so it counts as verified.
 */
export async function createAdmin(
  em: EntityManager,
  config: ResolvedConfig,
  input: CreateAdminInput,
): Promise<{ userId: string; created: boolean }> {
  const email = parseEmail(input.email);
  const adminRole = config.admin.adminRoles[0]!;
  const now = config.clock.now();
  const existing = await em.findOne(User, { email });
  if (existing) {
    const roles = existing.role.split(",").map((r) => r.trim()).filter(Boolean);
    if (!roles.includes(adminRole)) {
      await inTransaction(em, async (tx) => {
        await tx.nativeUpdate(User, { id: existing.id }, { role: [...roles, adminRole].join(","), updatedAt: now });
        await recordAudit(tx, config.clock, CLI, { action: "create-admin", targetType: "user", targetId: existing.id, metadata: { promoted: true, role: adminRole } });
      });
    }
    return { userId: existing.id, created: false };
  }
  const password = typeof input.password === "function" ? await input.password() : input.password;
  if (!password) {
    throw new BootstrapError(`No user has the email ${email}: a password is required to create one (on standard input, in PORTCULLIS_ADMIN_PASSWORD or at the prompt)`);
  }
  checkPasswordLength(config, password);
  const passwordHash = await hashPassword(password);
  const userId = randomUUID();
  await mapUniqueViolation(() =>
    inTransaction(em, async (tx) => {
      await tx.insert(User, {
        id: userId,
        email,
        emailVerified: true,
        name: input.name ?? email.split("@")[0]!,
        image: null,
        username: null,
        displayUsername: null,
        role: adminRole,
        banned: false,
        createdAt: now,
        updatedAt: now,
      });
      await tx.insert(Account, credentialAccount(userId, passwordHash, now));
      await recordAudit(tx, config.clock, CLI, { action: "create-admin", targetType: "user", targetId: userId, metadata: { promoted: false, role: adminRole } });
    }),
  );
  return { userId, created: true };
}
