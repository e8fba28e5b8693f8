/**
 * Portcullis as the harness runs it (test/harness/server.ts): a real server on loopback over a
 * fresh SQLite or PostgreSQL database (PORTCULLIS_TEST_DB), an injected clock, mails over real
 * SMTP into a sink. It listens on its public URL's port, so links, cookies and the CSRF origin
 * are the ones a browser would see, and the loopback OpenID provider can redirect to it.
 */
import { createPortcullis } from "../../src/index.ts";
import { createAdmin } from "../../src/modules/admin/bootstrap.service.ts";
import { oidcProviders } from "../harness/oauth-helpers.ts";
import { createTestDatabase } from "../harness/database.ts";
import type { TestOidcProvider } from "../harness/oidc.ts";
import { startSmtpSink, type ReceivedMail } from "../harness/smtp.ts";
import { APP_PAGES, BASE_PATH, MailCursor, PASSKEY_RP, SECRET, TWO_FACTOR_ISSUER, type ReadableMail, type Target } from "./targets.ts";

/**
 * Real time, as better-auth sees it (records made one after the other get increasing
 * timestamps, so listings sort the same way), moved ahead on demand instead of sleeping.
 */
class ShiftedClock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

export async function startPortcullis(port: number, oidc: TestOidcProvider): Promise<Target> {
  const origin = `http://127.0.0.1:${port}`;
  const sink = await startSmtpSink();
  const db = await createTestDatabase();
  const clock = new ShiftedClock();
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    secret: SECRET,
    logLevel: "silent",
    clock,
    publicUrl: origin,
    basePath: BASE_PATH,
    rateLimit: { enabled: false, perAddress: false },
    email: { smtpUrl: sink.url },
    user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } },
    deviceAuthorization: { intervalSec: 1 },
    twoFactor: { issuer: TWO_FACTOR_ISSUER },
    passkey: { rpID: PASSKEY_RP.id, rpName: PASSKEY_RP.name },
    // A membership limit of three on both sides: the scenario that fills an organization stays small.
    organization: { teams: { enabled: true }, membershipLimit: 3 },
    providers: oidcProviders(oidc),
    // The app's own sign-in and consent pages, as better-auth's oauth-provider is configured (targets.ts APP_PAGES).
    oidcProvider: { ...APP_PAGES },
  });
  await portcullis.listen(port, "127.0.0.1");
  const cursor = new MailCursor(() => sink.messages.flatMap((m) => m.to.map((to) => readable(to, m))));

  return {
    side: "portcullis",
    origin,
    nextMail: async (address, timeoutMs = 5000) => (await cursor.next(address, timeoutMs))?.link ?? null,
    nextCode: async (address, timeoutMs = 5000) => (await cursor.next(address, timeoutMs))?.code ?? null,
    unreadMails: (addresses) => cursor.unread(addresses, 250),
    async promoteToAdmin(email) {
      const { app } = portcullis;
      await createAdmin(app.orm.em.fork(), app.config, { email });
    },
    async ageSessions(ms) {
      clock.offsetMs += ms;
    },
    async wait(ms) {
      clock.offsetMs += ms;
    },
    beginScenario() {
      // Each scenario starts at the real time again (the provider's tokens use it).
      clock.offsetMs = 0;
    },
    async close() {
      await portcullis.close();
      await sink.close();
      await db.drop();
    },
  };
}

/**
 * What a mail carries: its first link to the service (verification, reset...), or, for a mail
 * with none, the one-time code on a line of its own (the two-factor OTP mail, mail/templates.ts).
 */
function readable(to: string, mail: ReceivedMail): ReadableMail {
  // The service's own links, or the app's invitation page (organization.invitationUrl's default).
  const link = (mail.text.match(/https?:\/\/[^\s<>"]+/g) ?? []).find((l) => l.includes(BASE_PATH) || l.includes("/accept-invitation?")) ?? null;
  const code = link === null ? (/^\s*(\d{6})\s*$/m.exec(mail.text)?.[1] ?? null) : null;
  return { to, link, code };
}
