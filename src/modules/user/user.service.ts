import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { hashPassword } from "../../crypto/password.ts";
import { Account, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { mapUniqueViolation } from "../../db/unique.ts";
import { AuthError } from "../../errors.ts";
import { checkPasswordLength, issueSession, parseUsername, passwordChanged, type RequestInfo, type ResolvedSession, revokeAllSessions, type SignedIn, type StepUp, userChanged } from "../../core/index.ts";

export interface UpdateUserInput {
  name?: string | undefined;
  image?: string | null | undefined;
  username?: string | undefined;
  displayUsername?: string | undefined;
  email?: unknown;
}

export async function updateUser(app: App, em: EntityManager, userId: string, input: UpdateUserInput): Promise<void> {
  if (input.email !== undefined) throw new AuthError("EMAIL_CAN_NOT_BE_UPDATED");
  const changes: Record<string, unknown> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.image !== undefined) changes.image = input.image;
  if (input.username !== undefined) {
    changes.username = parseUsername(input.username);
    changes.displayUsername = input.displayUsername ?? input.username;
  } else if (input.displayUsername !== undefined) {
    changes.displayUsername = input.displayUsername;
  }
  // better-auth's rule: an update that names no field is a client mistake, not a silent no-op.
  if (Object.keys(changes).length === 0) throw new AuthError("NO_FIELDS_TO_UPDATE");
  changes.updatedAt = app.clock.now();
  await mapUniqueViolation(() => em.nativeUpdate(User, { id: userId }, changes));
  userChanged(app, em, userId);
}

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  revokeOtherSessions?: boolean | undefined;
}

export async function changePassword(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  auth: ResolvedSession,
  stepUp: StepUp,
  input: ChangePasswordInput,
): Promise<SignedIn> {
  checkPasswordLength(app.config, input.newPassword);
  const accountId = await stepUp.verifyPassword(input.currentPassword, "CREDENTIAL_ACCOUNT_NOT_FOUND");
  const passwordHash = await hashPassword(input.newPassword);
  const now = app.clock.now();
  const { user } = auth;
  const result = await inTransaction(em, async (tx): Promise<SignedIn> => {
    await tx.nativeUpdate(Account, { id: accountId }, { password: passwordHash, updatedAt: now });
    // A reset link mailed before the change must not undo it.
    await passwordChanged(app, tx, auth.user.id);
    if (!input.revokeOtherSessions) return { token: null, cookieMaxAgeSec: null, user };
    // Keep only a fresh session: every earlier one (the current included) is revoked.
    await revokeAllSessions(app, tx, auth.user.id);
    const issued = await issueSession(app, tx, req, { userId: auth.user.id, rememberMe: auth.session.rememberMe, amr: ["pwd"] });
    return { token: issued.token, cookieMaxAgeSec: issued.cookieMaxAgeSec, user };
  });
  return result;
}
