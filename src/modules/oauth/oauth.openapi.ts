import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { accountRecord, redirectAnswer, statusTrue, twoFactorRedirect, userRecord } from "../../openapi/records.ts";

const authorization = z.object({ url: z.string().describe("The provider's authorization URL"), redirect: z.boolean() });
/** What the provider's callback can fail with once the flow's state is known (oauth.service.ts, linking.service.ts). */
const SIGN_IN_OUTCOMES = ["OAUTH_PROVIDER_ERROR", "ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER", "ACCOUNT_NOT_LINKED", "EMAIL_NOT_VERIFIED", "BANNED_USER"] as const;
const PROVIDER_ACCOUNT = ["PROVIDER_NOT_FOUND", "ACCOUNT_NOT_FOUND", "FAILED_TO_GET_ACCESS_TOKEN", "OAUTH_PROVIDER_ERROR"] as const;

/** OpenAPI docs of oauth.router.ts (src/openapi/doc.ts). */
export const oauthDoc = moduleDoc({
  tag: "Social sign-in",
  description: "OAuth 2.0 sign-in and account linking with the configured providers; PKCE S256 and a state bound to the browser.",
  operations: {
    "signIn.social": {
      summary: "Start a social sign-in, or sign in with a provider's ID token",
      description:
        "`{ url, redirect }` (+ `Location` and the state cookie) to send the browser to the provider; with `idToken` (native apps), " +
        "a session at once (or `twoFactorRedirect`). With `oauth_query` (an authorize request's sign-in page), the callback continues " +
        "that request (docs/oidc-provider.md); a forged or expired one is refused first.",
      access: "public",
      output: z.union([
        twoFactorRedirect,
        z.object({ redirect: z.literal(false), token: z.string().nullable(), user: userRecord }),
        authorization,
      ]),
      errors: ["PROVIDER_NOT_FOUND", "INVALID_CALLBACK_URL", "INVALID_OAUTH_QUERY", "ID_TOKEN_NOT_SUPPORTED", "INVALID_ID_TOKEN", ...SIGN_IN_OUTCOMES],
    },
    callback: {
      summary: "The provider's redirect back",
      description:
        "302 to the flow's callbackURL (a new user: newUserCallbackURL) with the session cookie; failures go to its errorCallbackURL " +
        "with `?error=CODE` when it set one. Needs the state cookie of the browser that started the flow. A sign-in started with " +
        "`oauth_query` goes to that authorize request's next step instead (the consent page, or the client with a code); the request " +
        "expired meanwhile: INVALID_OAUTH_QUERY, before the sign-in.",
      access: "public",
      output: redirectAnswer,
      redirect: "always",
      errors: ["PROVIDER_NOT_FOUND", "INVALID_CALLBACK_REQUEST", "STATE_MISMATCH", "ISSUER_MISMATCH", "USER_NOT_FOUND", "INVALID_OAUTH_QUERY", ...SIGN_IN_OUTCOMES],
    },
    callbackPost: {
      summary: "The provider's form_post response",
      description: "302 to the GET form of the callback, which the browser's SameSite=Lax state cookie then accompanies.",
      access: "public",
      output: redirectAnswer,
      redirect: "always",
      errors: ["PROVIDER_NOT_FOUND"],
    },
    errorPage: {
      summary: "The error page of failed browser callbacks",
      access: "public",
      output: z.string(),
    },
    linkSocial: {
      summary: "Link a provider account to the caller",
      description:
        "`{ url, redirect }` (+ `Location` and the state cookie) to send the browser to the provider; with `idToken`, the account " +
        "is linked at once: `{ url: \"\", status: true, redirect: false }`. The ID token follows the sign-in rules (fresh, single use).",
      access: "own-session",
      output: z.union([z.object({ url: z.literal(""), status: z.literal(true), redirect: z.literal(false) }), authorization]),
      errors: ["PROVIDER_NOT_FOUND", "INVALID_CALLBACK_URL", "ID_TOKEN_NOT_SUPPORTED", "INVALID_ID_TOKEN", "ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER", "BANNED_USER", "USER_NOT_FOUND"],
    },
    getAccessToken: {
      summary: "A linked account's access token",
      description: "Refreshed first when it expires within 5 s and a refresh token is stored. Not from an impersonation session.",
      access: "own-session",
      output: z.object({
        accessToken: z.string(),
        accessTokenExpiresAt: z.string().nullable(),
        scopes: z.array(z.string()),
        idToken: z.string().optional(),
      }),
      errors: PROVIDER_ACCOUNT,
    },
    refreshToken: {
      summary: "Refresh a linked account's tokens",
      description: "Not from an impersonation session.",
      access: "own-session",
      output: z.object({
        accessToken: z.string().nullable(),
        refreshToken: z.string().nullable(),
        accessTokenExpiresAt: z.string().nullable(),
        refreshTokenExpiresAt: z.string().nullable(),
        scope: z.string().nullable(),
        idToken: z.string().nullable(),
        providerId: z.string(),
        accountId: z.string(),
      }),
      errors: [...PROVIDER_ACCOUNT, "REFRESH_TOKEN_NOT_FOUND"],
    },
    accountInfo: {
      summary: "A linked account's user info, live from the provider",
      access: "session",
      output: z.object({
        user: z.object({
          id: z.string(),
          name: z.string().nullable().optional(),
          email: z.string(),
          image: z.string().nullable().optional().describe("As the provider sent it: absent when it sent none, null when it sent null"),
          emailVerified: z.boolean(),
        }),
        data: z.unknown().optional().describe("The provider's raw profile"),
      }),
      errors: [...PROVIDER_ACCOUNT, "AMBIGUOUS_ACCOUNT"],
    },
    listAccounts: {
      summary: "The caller's linked accounts",
      access: "session",
      output: z.array(accountRecord),
    },
    unlinkAccount: {
      summary: "Unlink an account",
      description: "Never the last way to sign in.",
      access: "own-session",
      output: statusTrue,
      errors: ["FAILED_TO_UNLINK_LAST_ACCOUNT", "ACCOUNT_NOT_FOUND", "PROVIDER_NOT_FOUND"],
    },
  },
});
