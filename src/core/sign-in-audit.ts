import type { App } from "../app.ts";
import { uuidv7 } from "./ids.ts";
import type { RequestInfo } from "./session/sessions.ts";

/**
 * Sign-ins in the audit trail (docs/operations.md "Audit"): every way in records its outcome, a
 * session issued (`sign-in`) or a refusal (`sign-in-failed` with the error code as `reason`),
 * with the method, the client's IP and user agent. The tRPC middleware `signInAudit`
 * (src/trpc/sign-in-audit.ts) calls this once per sign-in call.
 *
 * Written right after the outcome, before the answer, with one prepared insert outside the
 * sign-in's transaction (a refusal rolled that back; password sign-in has none on its fast path).
 * An unknown address and a wrong password write the same row (the target id aside): the same
 * time, no enumeration. A failed write is logged and never changes the answer.
 */
export type SignInMethod = "email" | "username" | "social" | "id-token" | "passkey" | "magic-link" | "email-otp" | "two-factor";

export interface SignInOutcome {
  method: SignInMethod;
  /** The user signed in, or the one the attempt named (null: unknown, or not reached). */
  userId: string | null;
  /** The error code of a refusal; absent for a session issued. */
  reason?: string;
  /** The social provider, for `social` and `id-token`. */
  provider?: string;
}

export async function recordSignIn(app: App, req: RequestInfo & { requestId?: string }, outcome: SignInOutcome): Promise<void> {
  const metadata: Record<string, string> = { method: outcome.method };
  if (outcome.provider) metadata.provider = outcome.provider.slice(0, 64);
  if (outcome.reason) metadata.reason = outcome.reason;
  try {
    await app.sessions.insertAudit(
      {
        id: uuidv7(),
        // A refusal has no actor: whoever tried is not known to be the user.
        actorId: outcome.reason ? null : outcome.userId,
        action: outcome.reason ? "sign-in-failed" : "sign-in",
        targetType: "user",
        targetId: outcome.userId,
        ip: req.ip?.slice(0, 64) ?? null,
        userAgent: req.userAgent?.slice(0, 1024) ?? null,
        metadata: JSON.stringify(metadata),
        createdAt: app.clock.now(),
      },
      app.orm,
    );
  } catch (err) {
    app.logger.error({ err, requestId: req.requestId }, "audit: a sign-in's record was not written");
  }
}
