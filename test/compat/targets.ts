/** What the scenario runner needs from a server under test, whichever it is. */
import { createServer } from "node:net";

export type Side = "better-auth" | "portcullis";

/**
 * better-auth options that differ per scenario, for rules where the contract takes one
 * better-auth configuration's behaviour in one case and another's in the next (see the
 * `variants` notes in allowlist.ts). Portcullis ignores them.
 */
export interface Variant {
  /** better-auth `user.deleteUser.sendDeleteAccountVerification` set (true, the default) or not. */
  deleteUserMail?: boolean;
}

export interface Target {
  side: Side;
  /** http://127.0.0.1:<port>: the public origin and where it listens. */
  origin: string;
  /** The link of the next unread mail to `address`, or null when none arrives within `timeoutMs`. */
  nextMail(address: string, timeoutMs?: number): Promise<string | null>;
  /** The one-time code of the next unread mail to `address` (two-factor email OTP), or null as above. */
  nextCode(address: string, timeoutMs?: number): Promise<string | null>;
  /** Per address, mails not read by nextMail yet (after a short wait for mails on their way); zero counts left out. */
  unreadMails(addresses: string[]): Promise<Record<string, number>>;
  /** Make an existing user an admin the way an operator does (Portcullis: create-admin). */
  promoteToAdmin(email: string): Promise<void>;
  /** Make every session look signed in `ms` earlier (session freshness rules). */
  ageSessions(ms: number): Promise<void>;
  /** Let `ms` pass for time rules (device polling interval). */
  wait(ms: number): Promise<void>;
  /** Before each scenario: the variant it asks for (defaults otherwise). */
  beginScenario(variant: Variant): void;
  close(): Promise<void>;
}

export const SECRET = "compat-secret-compat-secret-compat-0123456789";
export const BASE_PATH = "/api/auth";
/**
 * Both servers' two-factor issuer (the name in the otpauth:// URI). better-auth's appName too:
 * its get-totp-uri uses the appName whatever the plugin's `issuer` option says.
 */
export const TWO_FACTOR_ISSUER = "compat";
/**
 * Both servers' WebAuthn relying party. An RP ID is a domain (browsers refuse IP addresses);
 * no ceremony runs here (the browser test does), so it only has to be the same on both sides.
 */
export const PASSKEY_RP = { id: "localhost", name: "Compat" } as const;
/**
 * Both servers' OpenID provider pages (`oidcProvider.loginPage` / `consentPage`, better-auth's
 * oauth-provider `loginPage` / `consentPage`): an app's own pages, on the app's origin. The
 * authorize request reaches them as a signed `oauth_query` (scenarios/oidc-pages.ts).
 */
export const APP_PAGES = { loginPage: "https://app.example.test/oauth/sign-in", consentPage: "https://app.example.test/oauth/consent" } as const;

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A received mail as the scenarios read it: the link it carries, or the one-time code (two-factor OTP). */
export interface ReadableMail {
  to: string;
  link: string | null;
  code: string | null;
}

/** Per-address read cursors over a list of received mails (links and codes alike: one sequence per address). */
export class MailCursor<M extends ReadableMail> {
  private readonly read = new Map<string, number>();
  constructor(private readonly all: () => M[]) {}

  private forAddress(address: string): M[] {
    return this.all().filter((m) => m.to === address.toLowerCase());
  }

  /** The next unread mail to `address`, or null when none arrives within `timeoutMs`. */
  async next(address: string, timeoutMs: number): Promise<M | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = this.read.get(address.toLowerCase()) ?? 0;
      const mail = this.forAddress(address)[seen];
      if (mail) {
        this.read.set(address.toLowerCase(), seen + 1);
        return mail;
      }
      if (Date.now() >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async unread(addresses: string[], settleMs: number): Promise<Record<string, number>> {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const out: Record<string, number> = {};
    for (const address of addresses) {
      const n = this.forAddress(address).length - (this.read.get(address.toLowerCase()) ?? 0);
      if (n > 0) out[address] = n;
    }
    return out;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
