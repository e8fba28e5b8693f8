import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User } from "../../db/entities/index.ts";
import { actionLink } from "../../mail/links.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { magicLinkEmail } from "../../mail/templates.ts";
import { consumeVerification, findLiveToken, mailTokenLater, parseEmail, type AddressSignIn, type RequestInfo, signInByAddress, storeVerification } from "../../core/index.ts";

/**
 * better-auth's magic-link plugin (docs/passwordless.md), with the differences of
 * docs/wire-contract.md §10: the token is 32 random bytes stored as its SHA-256 (kernel
 * single-use records), the mail is decided after the answer, and a browser confirms on a page.
 */
const PURPOSE = "magic-link";

/** What the link's record holds: the address it went to, and a first sign-in's name. */
interface LinkValue {
  email: string;
  name?: string;
}

export interface MagicLinkRequest {
  email: string;
  name?: string | undefined;
  callbackURL?: string | undefined;
  newUserCallbackURL?: string | undefined;
  errorCallbackURL?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/**
 * POST /sign-in/magic-link. Only the address is checked here; the throttle, the lookup, the token
 * and the SMTP send run after the answer (mailTokenLater), so every address answers alike, in the
 * same time. An address without an account gets a link unless `magicLink.disableSignUp`.
 */
export function requestMagicLink(app: App, req: MailRequest, input: MagicLinkRequest): void {
  const email = parseEmail(input.email);
  mailTokenLater(app, req, PURPOSE, async (em) => {
    // Counted before the lookup: unknown addresses spend their budget like known ones.
    if (!(await app.addressLimiter.allow(PURPOSE, email))) return null;
    const user = await em.findOne(User, { email }, { disableIdentityMap: true });
    if (!user && app.config.magicLink.disableSignUp) return null;
    const ttlSec = app.config.magicLink.expiresIn;
    const value: LinkValue = { email, ...(input.name ? { name: input.name } : {}) };
    const issued = await storeVerification(app, em, PURPOSE, JSON.stringify(value), ttlSec);
    const { callbackURL, newUserCallbackURL, errorCallbackURL } = input;
    const link = actionLink(app, "/magic-link/verify", { token: issued.token, callbackURL, newUserCallbackURL, errorCallbackURL });
    return { issued, message: magicLinkEmail(email, user?.name || input.name || null, link, ttlSec, input.metadata) };
  });
}

/** The address a live link signs in as, without using it up (the confirm page); null for a bad, used or expired one. */
export async function liveLinkAddress(app: App, em: EntityManager, token: string): Promise<string | null> {
  const row = await findLiveToken(app, em, PURPOSE, token);
  return row ? (JSON.parse(row.value) as LinkValue).email : null;
}

/**
 * Uses the link up and signs in, in one transaction (core/address-sign-in.ts): the account is
 * created on a first sign-in unless `magicLink.disableSignUp`, an unproven one is taken over, and
 * a user with two-factor on gets a pending sign-in instead of a session.
 */
export function verifyMagicLink(app: App, em: EntityManager, req: RequestInfo, token: string, trustCookie: string | null): Promise<AddressSignIn> {
  const opts = { signUp: !app.config.magicLink.disableSignUp, noAccount: "NEW_USER_SIGNUP_DISABLED", invalidProof: "INVALID_TOKEN", audit: "magic-link-sign-in", trustCookie } as const;
  return signInByAddress(app, em, req, opts, async (tx) => {
    const value = await consumeVerification(app, tx, PURPOSE, token);
    return value === null ? null : (JSON.parse(value) as LinkValue);
  });
}
