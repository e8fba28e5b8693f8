import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { actionLink } from "../../mail/links.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { deleteAccountEmail } from "../../mail/templates.ts";
import { type Actor, consumeToken, deleteUserAndEverything, issueToken, mailTokenLater, recordAudit, type ResolvedSession, type StepUp } from "../../core/index.ts";

/**
 * POST /delete-user and GET /delete-user/callback (docs/wire-contract.md §9). Proof that the account
 * holder is at the keyboard: the password, a session signed in within `session.freshAgeSec`, or
 * the mailed single-use link opened where the user is signed in. Anything less gets the link.
 */
const PURPOSE = "delete-account";

export type DeleteOutcome = "deleted" | "mailed";

interface DeleteInput {
  password?: string | undefined;
  token?: string | undefined;
  callbackURL?: string | undefined;
}

function assertEnabled(app: App): void {
  if (!app.config.user.deleteUser.enabled) throw new AuthError("NOT_FOUND");
}

export async function deleteUser(app: App, em: EntityManager, req: MailRequest, auth: ResolvedSession, actor: Actor, stepUp: StepUp, input: DeleteInput): Promise<DeleteOutcome> {
  assertEnabled(app);
  const userId = auth.user.id;
  if (input.password !== undefined) {
    await stepUp.verifyPassword(input.password, "CREDENTIAL_ACCOUNT_NOT_FOUND");
  } else if (input.token !== undefined) {
    await deleteWithToken(app, em, userId, actor, input.token);
    return "deleted";
  } else if (!stepUp.fresh) {
    mailDeleteLink(app, req, auth, input.callbackURL);
    return "mailed";
  }
  await deleteNow(app, em, userId, actor, "password-or-fresh-session");
  return "deleted";
}

/** The mailed link, opened in a browser signed in as the same user. */
export async function deleteUserCallback(app: App, em: EntityManager, auth: ResolvedSession, actor: Actor, token: string): Promise<void> {
  assertEnabled(app);
  await deleteWithToken(app, em, auth.user.id, actor, token);
}

/** Uses the token up and deletes, in one transaction: a token of another user is not found (and stays theirs). */
async function deleteWithToken(app: App, em: EntityManager, userId: string, actor: Actor, token: string): Promise<void> {
  await deleteNow(app, em, userId, actor, "mailed-link", async (tx) => {
    const value = await consumeToken(app, tx, PURPOSE, token);
    if (!value || value.userId !== userId) throw new AuthError("INVALID_TOKEN");
  });
}

async function deleteNow(app: App, em: EntityManager, userId: string, actor: Actor, proof: string, check?: (tx: EntityManager) => Promise<void>): Promise<void> {
  await inTransaction(em, async (tx) => {
    await check?.(tx);
    // Already gone: a concurrent request deleted it. Its session is gone with it (one audit record).
    if (!(await deleteUserAndEverything(app, tx, userId))) throw new AuthError("UNAUTHORIZED");
    await recordAudit(tx, app.clock, actor, { action: "delete-user", targetType: "user", targetId: userId, metadata: { proof } });
  });
}

function mailDeleteLink(app: App, req: MailRequest, auth: ResolvedSession, callbackURL: string | undefined): void {
  const { user } = auth;
  mailTokenLater(app, req, PURPOSE, async (em) => {
    const ttlSec = app.config.user.deleteUser.tokenExpiresInSec;
    const issued = await issueToken(app, em, PURPOSE, { userId: user.id }, ttlSec);
    const link = actionLink(app, "/delete-user/callback", { token: issued.token, callbackURL });
    return { issued, message: deleteAccountEmail(user.email, user.name, link, ttlSec) };
  });
}
