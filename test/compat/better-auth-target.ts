/**
 * The reference: better-auth 1.6 in this process, served over real HTTP on loopback by its own
 * node adapter, on an in-memory better-sqlite3 database migrated by its own migrator. Mails are
 * the callbacks' arguments, kept in memory. Where better-auth has an option for a rule the
 * contract states, the option is set to the contract's rule (commented where it is).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import Database from "better-sqlite3";
import { betterAuth, type BetterAuthOptions } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import { admin, bearer, deviceAuthorization, emailOTP, jwt, magicLink, organization, twoFactor, username } from "better-auth/plugins";
import { passkey } from "@better-auth/passkey";
import { oauthProvider } from "@better-auth/oauth-provider";
import { defaultRoles } from "better-auth/plugins/admin/access";
import { apiKey } from "@better-auth/api-key";
import type { TestOidcProvider } from "../harness/oidc.ts";
import { loopbackProviders, verifyLoopbackIdToken } from "./better-auth-providers.ts";
import { APP_PAGES, BASE_PATH, MailCursor, PASSKEY_RP, SECRET, sleep, TWO_FACTOR_ISSUER, type ReadableMail, type Target, type Variant } from "./targets.ts";


/** The reference server's password hash (see emailAndPassword.password below): salt and SHA-256, compared in constant time. */
async function fastHash(password: string): Promise<string> {
  const salt = createHash("sha256").update(`${Math.random()}${Date.now()}`).digest("hex").slice(0, 16);
  return `${salt}:${createHash("sha256").update(`${salt}:${password}`).digest("hex")}`;
}

function fastVerify(stored: string, password: string): boolean {
  const [salt, digest] = stored.split(":");
  if (!salt || !digest) return false;
  const candidate = Buffer.from(createHash("sha256").update(`${salt}:${password}`).digest("hex"));
  return candidate.length === digest.length && timingSafeEqual(candidate, Buffer.from(digest));
}

export async function startBetterAuth(port: number, oidc: TestOidcProvider): Promise<Target> {
  const origin = `http://127.0.0.1:${port}`;
  const mails: ReadableMail[] = [];
  const mail = (to: string, link: string) => void mails.push({ to: to.toLowerCase(), link, code: null });
  const sqlite = new Database(":memory:");

  const sendDeleteAccountVerification = async ({ user, url }: { user: { email: string }; url: string }) => mail(user.email, url);
  // Read at request time by better-auth (options.user.deleteUser is this object): Variant.deleteUserMail.
  const deleteUser: NonNullable<NonNullable<BetterAuthOptions["user"]>["deleteUser"]> = { enabled: true, sendDeleteAccountVerification };

  const options = {
    // Also the issuer better-auth's get-totp-uri puts in the URI (it ignores the plugin's `issuer`).
    appName: TWO_FACTOR_ISSUER,
    baseURL: origin,
    basePath: BASE_PATH,
    secret: SECRET,
    database: sqlite,
    logger: { disabled: true },
    telemetry: { enabled: false },
    rateLimit: { enabled: false },
    emailAndPassword: {
      enabled: true,
      // docs/wire-contract.md §4 "Reset revokes all sessions of the user": better-auth's own option for it.
      revokeSessionsOnPasswordReset: true,
      // The reference's password hashing is invisible on the wire; its default (scrypt, ~60 ms of
      // CPU each) was most of this file's time. A salted SHA-256, for this in-process reference only.
      password: { hash: fastHash, verify: async ({ hash, password }) => fastVerify(hash, password) },
      sendResetPassword: async ({ user, url }) => mail(user.email, url),
    },
    emailVerification: {
      sendVerificationEmail: async ({ user, url }) => mail(user.email, url),
    },
    user: {
      changeEmail: {
        enabled: true,
        updateEmailWithoutVerification: true,
        sendChangeEmailConfirmation: async ({ user, url }) => mail(user.email, url),
      },
      deleteUser,
    },
    account: {
      // docs/wire-contract.md §5: explicit linking links the provider account "whatever its email".
      accountLinking: { allowDifferentEmails: true },
    },
    socialProviders: {
      // The built-in provider, for ID-token sign-in only: its id_token check pointed at the
      // loopback provider's issuer and JWKS through better-auth's own `verifyIdToken` option.
      google: {
        clientId: oidc.postClient.clientId,
        clientSecret: oidc.postClient.clientSecret,
        verifyIdToken: (token: string, nonce?: string) => verifyLoopbackIdToken(oidc, oidc.postClient.clientId, token, nonce),
      },
    },
    plugins: [
      username(),
      // The built-in roles spelled out: better-auth then refuses unknown roles, as Portcullis
      // (which always knows its roles, docs/wire-contract.md §6) does.
      admin({ roles: defaultRoles }),
      deviceAuthorization({ interval: "1s", expiresIn: "30m" }),
      // Issuer, relying party: the values Portcullis is configured with (portcullis-target.ts).
      twoFactor({
        issuer: TWO_FACTOR_ISSUER,
        otpOptions: { sendOTP: async ({ user, otp }) => void mails.push({ to: user.email.toLowerCase(), link: null, code: otp }) },
      }),
      passkey({ rpID: PASSKEY_RP.id, rpName: PASSKEY_RP.name }),
      jwt(),
      // Portcullis' defaults where better-auth's differ on purpose (docs/machine-access.md): keys act as their owner, prefix pc_.
      apiKey({ enableSessionForAPIKeys: true, defaultPrefix: "pc_" }),
      // Passwordless (docs/wire-contract.md §10): the link and the code land in the same mail list.
      // Tokens and codes hashed at rest, as Portcullis stores them (its wire does not change with it).
      magicLink({ sendMagicLink: async ({ email, url }) => mail(email, url), storeToken: "hashed" }),
      emailOTP({
        sendVerificationOTP: async ({ email, otp }) => void mails.push({ to: email.toLowerCase(), link: null, code: otp }),
        storeOTP: "hashed",
      }),
      // Organizations with teams (docs/organizations.md); the invitation mail links to the app's
      // accept page, as Portcullis' default `organization.invitationUrl` does.
      organization({
        teams: { enabled: true },
        // Three members, as the Portcullis target: the membership-limit scenario fills an organization.
        membershipLimit: 3,
        sendInvitationEmail: async ({ id, email }) => mail(email, `${origin}/accept-invitation?invitationId=${id}`),
      }),
      // After twoFactor: after-hooks run in plugin order, and a sign-in that two-factor turns into a
      // pending one (no session, docs/wire-contract.md §3) must not send `set-auth-token` with the token of
      // the session the two-factor hook has just deleted (bearer first would).
      bearer(),
      loopbackProviders(oidc),
      // The OpenID provider (docs/oidc-provider.md): Portcullis's defaults where better-auth has an option
      // (open registration, the scopes); the app's own sign-in and consent pages on both servers.
      oauthProvider({
        ...APP_PAGES,
        scopes: ["openid", "profile", "email", "offline_access"],
        allowDynamicClientRegistration: true,
        allowUnauthenticatedClientRegistration: true,
        silenceWarnings: { oauthAuthServerConfig: true, openidConfig: true },
      }),
    ],
  } satisfies BetterAuthOptions;

  const { runMigrations } = await getMigrations(options);
  await runMigrations();
  const auth = betterAuth(options);
  const server: Server = createServer(toNodeHandler(auth));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const cursor = new MailCursor(() => mails);

  return {
    side: "better-auth",
    origin,
    nextMail: async (address, timeoutMs = 2000) => (await cursor.next(address, timeoutMs))?.link ?? null,
    nextCode: async (address, timeoutMs = 2000) => (await cursor.next(address, timeoutMs))?.code ?? null,
    unreadMails: (addresses) => cursor.unread(addresses, 0),
    async promoteToAdmin(email) {
      // What Portcullis' create-admin does to an existing user: add the admin role.
      sqlite.prepare(`UPDATE "user" SET role = 'user,admin' WHERE email = ?`).run(email.toLowerCase());
    },
    async ageSessions(ms) {
      const rows = sqlite.prepare(`SELECT id, createdAt FROM "session"`).all() as Array<{ id: string; createdAt: string | number }>;
      const update = sqlite.prepare(`UPDATE "session" SET createdAt = ? WHERE id = ?`);
      for (const row of rows) {
        const earlier = new Date(new Date(row.createdAt).getTime() - ms);
        update.run(typeof row.createdAt === "number" ? earlier.getTime() : earlier.toISOString(), row.id);
      }
    },
    wait: sleep,
    beginScenario(variant: Variant) {
      deleteUser.sendDeleteAccountVerification = variant.deleteUserMail === false ? undefined : sendDeleteAccountVerification;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      sqlite.close();
    },
  };
}
