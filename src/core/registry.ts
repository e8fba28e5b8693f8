import type { EntityManager } from "@mikro-orm/core";
import type { SessionWithUser, UserRow } from "../db/session-store/index.ts";
import type { MailDraft, MailRequest } from "../mail/types.ts";

/*
 * What a family puts into the kernel (its `src/modules/<family>/index.ts` exports a Family; the
 * composition root lists them, src/modules/index.ts): what it holds for a user (removed with
 * everything else), a step in the sign-in gate, mailed link kinds GET /verify-email opens. The
 * kernel calls them; it never imports a family. `A` is the App (src/app.ts), a parameter so that
 * this file imports nothing the App imports back.
 */

/** What a family holds for a user, and when it goes (core/holdings.ts, core/session/revoke.ts). */
export interface Holding<A> {
  /** The family, for messages and tests. */
  family: string;
  /**
   * Sign out everywhere: what a session-holder could still finish (a pending second step, a
   * trusted device, an approved device code). Runs before the sessions are deleted.
   */
  signedOutEverywhere?(app: A, tx: EntityManager, userId: string): Promise<void>;
  /** The password changed: what the old password started and could still finish. */
  passwordChanged?(app: A, tx: EntityManager, userId: string): Promise<void>;
  /**
   * Everything that lets anyone in as the user later goes (takeover, reset, deletion): a link
   * flow in flight, and with `removal.accounts` other than "none" the credentials set up while
   * nobody had proven the address (a squatter's second factor would lock the owner out, their
   * passkey let them back in).
   */
  removed?(app: A, tx: EntityManager, userId: string, removal: Removal): Promise<void>;
}

export interface Removal {
  /**
   * Linked accounts that go too: "all" (takeover: the unproven password included; delete-user),
   * "social" (the reset of an unverified account keeps the password it has just set, and drops
   * every provider account linked while nobody had proven the address), "none" (any other reset).
   * "all" and "social" also remove what families set up while the address was unproven (Holding).
   */
  accounts: "all" | "social" | "none";
}

/** How a sign-in proved its first factor ("passwordless": control of the mailbox, by a magic link or a mailed code). */
export type WayIn = "password" | "social" | "passwordless";

/** What a sign-in that proved the first factor does next. */
export type SecondStep =
  /** No second step (none applies, or the browser is trusted: its cookie rotated). */
  | { kind: "none"; trustToken: string | null }
  /** `{ twoFactorRedirect: true, twoFactorMethods }` and the pending cookie; no session yet. */
  | { kind: "pending"; pendingToken: string; methods: string[] };

export interface GateUser {
  id: string;
  twoFactorEnabled: boolean;
}

/**
 * A step a family puts in the sign-in gate (core/sign-in-gate.ts; two-factor does): it decides
 * whether it applies to this user and way in, and begins (a pending sign-in, or none for a
 * trusted device) inside the transaction that would issue the session.
 */
export interface SignInStep<A> {
  family: string;
  applies(app: A, user: GateUser, way: WayIn): boolean;
  begin(app: A, tx: EntityManager, user: GateUser, opts: { rememberMe: boolean; trustCookie: string | null }): Promise<SecondStep>;
}

/**
 * A mailed link kind GET /verify-email opens besides the verification link (change-email's two
 * steps): the family that mails it registers it. `user`: the moved user, when opening it changed
 * the address (answered as `{ status: true, user }`); absent otherwise.
 */
export interface EmailLink<A> {
  purpose: string;
  open(app: A, em: EntityManager, req: MailRequest, token: string, callbackURL: string | undefined): Promise<{ user?: UserRow }>;
}

/**
 * Response headers a family adds to every get-session answer that has a session (the JWT
 * family's `set-auth-jwt`). On the hot path: answer synchronously when it can (a cache), a
 * promise only when there is work to do.
 */
export type SessionHeaders<A> = (app: A, value: SessionWithUser) => Record<string, string> | Promise<Record<string, string>> | null;
/** A mail the kernel's deferred sender (core/single-use-tokens.ts mailTokenLater) sends, with what to undo when it fails. */
export interface PreparedMail {
  message: MailDraft;
  /** The token row the mail carries: deleted again when the send fails. */
  issued?: { id: string };
  /** Or whatever else makes the mail's credential live: undone when the send fails. */
  undo?: (em: EntityManager) => Promise<void>;
}

/**
 * Another way to prove an address than the verification link (core/email-proof.ts): when
 * `replacesLink` says so for this configuration, every verification mail (sign-up, the sign-in of
 * an unverified user, send-verification-email, a changed address) is this instead. email-otp's
 * `overrideDefaultEmailVerification` registers one: a code instead of a link.
 */
export interface EmailProof<A> {
  family: string;
  replacesLink(app: A): boolean;
  /** Inside the deferred mail job (mailTokenLater): the proof for `user`, or null when none goes out (throttled). */
  prepare(app: A, em: EntityManager, user: { id: string; email: string; name: string }): Promise<PreparedMail | null>;
}

/**
 * A grant type another family redeems at the OpenID provider's token endpoint (the device
 * family's RFC 8628 `urn:ietf:params:oauth:grant-type:device_code`): the provider authenticates
 * the client, the family decides the grant (throwing its RFC's OAuthError: authorization_pending,
 * slow_down...) and names the user and scopes; the provider mints the tokens.
 */
export interface TokenGrant<A> {
  grantType: string;
  /** What the grant adds to the provider's metadata (RFC 8628 §4 `device_authorization_endpoint`). */
  metadata?(app: A): Record<string, string>;
  redeem(app: A, em: EntityManager, params: Record<string, string | undefined>, clientId: string): Promise<{ userId: string; scope: string | null }>;
}

/**
 * A sign-in body's `oauth_query` (better-auth's oauth-provider wire, docs/oidc-provider.md
 * "Pages"): an app's own sign-in page sends the signed authorize request along with the
 * sign-in; `check` refuses a forged one before the sign-in runs, and once a session is handed
 * over, `continue` answers the authorize request's next step instead of the sign-in's answer.
 */
export interface SignInContinuation<A> {
  /** Throws when forged or expired; false when the family is off (the field is then ignored). */
  check(app: A, query: string): boolean;
  /** Where the authorize request goes next (the client with a code, the consent page, or an error). */
  continue(app: A, em: EntityManager, sessionToken: string, query: string): Promise<{ redirect: true; url: string }>;
}

/**
 * The signing keys a family signs with (core/signing-keys.ts): an algorithm and the longest
 * lifetime of what it signs with it, so the JWKS makes that algorithm's key before the first token
 * and keeps a retired key published until the last of those has expired. The configuration's
 * current uses: the JWT family's `jwt.alg` tokens, the OpenID provider's ID tokens and access tokens.
 */
export type KeyUses<A> = (app: A) => { alg: "EdDSA" | "ES256" | "RS256"; lifetimeSec: number }[];

export interface Family<A> {
  name: string;
  keyUses?: KeyUses<A>;
  signInContinuation?: SignInContinuation<A>;
  tokenGrants?: TokenGrant<A>[];
  holding?: Omit<Holding<A>, "family">;
  signInSteps?: SignInStep<A>[];
  emailLinks?: EmailLink<A>[];
  sessionHeaders?: SessionHeaders<A>;
  emailProofs?: EmailProof<A>[];
}

/** Every family's contributions, gathered once per instance (App.registry). */
export interface Registry<A> {
  holdings: Holding<A>[];
  signInSteps: SignInStep<A>[];
  emailLinks: EmailLink<A>[];
  sessionHeaders: SessionHeaders<A>[];
  emailProofs: EmailProof<A>[];
  tokenGrants: TokenGrant<A>[];
  keyUses: KeyUses<A>[];
  signInContinuation: SignInContinuation<A> | null;
}

export function buildRegistry<A>(families: readonly Family<A>[]): Registry<A> {
  const registry: Registry<A> = { holdings: [], signInSteps: [], emailLinks: [], sessionHeaders: [], emailProofs: [], tokenGrants: [], keyUses: [], signInContinuation: null };
  for (const f of families) {
    if (f.holding) registry.holdings.push({ family: f.name, ...f.holding });
    registry.signInSteps.push(...(f.signInSteps ?? []));
    if (f.signInContinuation) {
      if (registry.signInContinuation) throw new Error("two families continue sign-ins");
      registry.signInContinuation = f.signInContinuation;
    }
    if (f.sessionHeaders) registry.sessionHeaders.push(f.sessionHeaders);
    if (f.keyUses) registry.keyUses.push(f.keyUses);
    registry.emailProofs.push(...(f.emailProofs ?? []));
    for (const grant of f.tokenGrants ?? []) {
      if (registry.tokenGrants.some((g) => g.grantType === grant.grantType)) throw new Error(`two families redeem ${grant.grantType}`);
      registry.tokenGrants.push(grant);
    }
    for (const link of f.emailLinks ?? []) {
      if (registry.emailLinks.some((l) => l.purpose === link.purpose)) throw new Error(`two families open ${link.purpose} links`);
      registry.emailLinks.push(link);
    }
  }
  return registry;
}
