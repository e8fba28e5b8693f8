/**
 * THE list of differences between Portcullis and better-auth 1.6 that the contract makes on
 * purpose (docs/wire-contract.md). Each entry admits one kind of difference at one place:
 * an endpoint (or a scenario's step) and a path in the step record (compare.ts), and, where
 * given, the exact value on each side. Every entry names the wire contract's section that justifies
 * it. Anything else that differs fails test/compat. Entries that admit nothing any more fail
 * too (compat.test.ts): the list only ever says what is true today. Error messages are human
 * text and never compared (normalise.ts); codes are.
 */

import { ABSENT } from "./normalise.ts";

export interface Allowed {
  /** `METHOD /path` of the step (below the base path). An entry names an endpoint or a scenario and step. */
  endpoint?: string | RegExp;
  scenario?: string | RegExp;
  step?: string | RegExp;
  /** Path in the step record: `status`, `code`, `body.user.id`, `(step)`... */
  path: string | RegExp;
  /** The normalised value better-auth shows there (checked when given). */
  betterAuth?: unknown;
  /** The normalised value Portcullis shows there (checked when given). */
  portcullis?: unknown;
  /** "§N <section>: the rule". */
  contract: string;
}

const A = ABSENT;
/** Every part of a step's record: for steps whose whole outcome the contract changes. */
const WHOLE_STEP = /^(status|code|body(\..+)?|authToken|sessionCookie|location)$/;
const KEEPS_SESSION =
  "§10 Plugins and §3 Sessions: turning two-factor on (verify-totp, verify-otp) or off (disable) keeps the caller's session; " +
  "better-auth replaces it with a new one and sets its cookie, Portcullis keeps it, so a Bearer client's token stays valid";

export const allowlist: Allowed[] = [
  // §1 Conventions
  { endpoint: /./, path: "body.issues", betterAuth: A, contract: "§1 Conventions: validation errors may carry `issues: [{ path, message }]`" },
  { endpoint: /./, path: "code", betterAuth: A, contract: "§1 Conventions: every error body is { code, message } (better-auth sends some errors with a message only, or no body)" },
  { endpoint: /./, path: "body.message", betterAuth: A, portcullis: "<message>", contract: "§1 Conventions: every error body is { code, message } (better-auth sends some errors with no body)" },
  { endpoint: "GET /no-such-endpoint", path: "body", betterAuth: A, contract: "§1 Conventions: unknown path or method: 404 NOT_FOUND (an error body; better-auth's 404 has none)" },
  { endpoint: "GET /device", path: "code", betterAuth: "invalid_request", portcullis: "INVALID_USER_CODE", contract: "§1 Conventions: errors are { code, message }; only device-flow *token* errors use RFC 6749 bodies" },
  { endpoint: "GET /device", path: "body.error_description", betterAuth: "<message>", portcullis: A, contract: "§1 Conventions: errors are { code, message }; only device-flow *token* errors use RFC 6749 bodies" },

  // §3 Sessions
  ...["sign-in with a foreign callbackURL", "sign-in/social with a foreign callbackURL", "request-password-reset with a foreign redirectTo", "sign-in/magic-link with a foreign callbackURL"].map(
    (step): Allowed => ({ step, scenario: /./, path: WHOLE_STEP, contract: "§3 Sessions: callbackURL / redirectTo must be relative or trusted, else 403 INVALID_CALLBACK_URL (open-redirect defence)" }),
  ),
  { endpoint: "GET /delete-user/callback", path: "status", betterAuth: 404, portcullis: 401, contract: "§3 Sessions: no session on an endpoint that needs one is 401 UNAUTHORIZED" },
  { endpoint: "GET /delete-user/callback", path: "code", betterAuth: "FAILED_TO_GET_USER_INFO", portcullis: "UNAUTHORIZED", contract: "§3 Sessions: no session on an endpoint that needs one is 401 UNAUTHORIZED" },

  // §2 Records, §4 Email and password
  { endpoint: "POST /sign-up/email", path: "status", betterAuth: 422, portcullis: 409, contract: "§4 Email and password: 409 USER_ALREADY_EXISTS (email taken)" },
  { endpoint: /^POST \/(sign-up\/email|admin\/create-user)$/, path: "code", betterAuth: "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", portcullis: "USER_ALREADY_EXISTS", contract: "§4 Email and password: 409 USER_ALREADY_EXISTS (email taken)" },
  { endpoint: "POST /admin/create-user", path: "status", betterAuth: 400, portcullis: 409, contract: "§4 Email and password: a taken email answers 409 USER_ALREADY_EXISTS" },
  { endpoint: /^POST \/(sign-up\/email|update-user)$/, path: "status", betterAuth: 400, portcullis: 409, contract: "§4 Email and password: 409 USERNAME_IS_ALREADY_TAKEN" },
  { endpoint: "POST /sign-up/email", path: "code", betterAuth: "VALIDATION_ERROR", portcullis: "INVALID_EMAIL", contract: "§4 Email and password: sign-up answers a bad email with 400 INVALID_EMAIL" },
  { endpoint: "POST /is-username-available", path: "status", betterAuth: 422, portcullis: 400, contract: "§4 Email and password: a malformed username is 400 INVALID_USERNAME" },
  { endpoint: /^POST \/sign-in\/(email|username)$/, path: "body.url", betterAuth: A, portcullis: null, contract: "§4 Email and password: sign-in answers { redirect, token, url: string|null, user }" },
  { endpoint: "GET /verify-email", path: "status", betterAuth: 401, portcullis: 400, contract: "§4 Email and password: a bad, used or expired token gives 400 INVALID_TOKEN" },
  { scenario: "verification: a mailed link verifies the address", step: "follow the link again", path: "location", betterAuth: "<self>/verified", portcullis: "<self>/verified?error=INVALID_TOKEN", contract: "§4 Email and password: verification tokens are single use (better-auth's are reusable JWTs)" },
  { endpoint: "GET /delete-user/callback", path: "status", betterAuth: 404, portcullis: 400, contract: "§4 and §9: a bad token gives 400 INVALID_TOKEN; the delete link is single use" },
  // A mailed link carries the callbackURL the request gave, and none otherwise (better-auth puts `callbackURL=/` in every
  // link); followed without one it answers JSON, as the contract's tables say, instead of a 302 to the service's own "/".
  ...[
    ["verify-email", "§4 Email and password: GET /verify-email → 302 to callbackURL, or { status: true }"],
    ["delete-user/callback", "§9 Account self-service: GET /delete-user/callback?token= (callbackURL only when the request gave one)"],
  ].flatMap(([path, contract]): Allowed[] => [
    { scenario: /./, step: /mail$/, path: "body", betterAuth: `<self>/api/auth/${path}?callbackURL=/&token=<token>`, portcullis: `<self>/api/auth/${path}?token=<token>`, contract: contract! },
    { endpoint: `GET /${path}`, path: "status", betterAuth: 302, portcullis: 200, contract: contract! },
    { endpoint: `GET /${path}`, path: "location", betterAuth: "<self>/", portcullis: A, contract: contract! },
    { endpoint: `GET /${path}`, path: "body", betterAuth: A, contract: contract! },
  ]),
  { scenario: "username: update-user changes it", step: /^(get-session|new username sign-in)$/, path: "body.user.displayUsername", contract: "§2 Records: displayUsername defaults to the raw username (better-auth keeps the old one when only the username changes)" },

  // §5 OAuth 2.0 social sign-in
  { endpoint: /^GET \/callback\//, path: "authToken", betterAuth: true, portcullis: A, contract: "§5 OAuth: the callback sets the session cookie only (no set-auth-token: it is a browser redirect)" },
  { endpoint: /^POST \/(sign-in\/social|link-social)$/, path: "status", betterAuth: 404, portcullis: 400, contract: "§5 and §9: 400 PROVIDER_NOT_FOUND (unknown provider), 400 ID_TOKEN_NOT_SUPPORTED" },
  // better-auth 1.6 looks for the provider account among the caller's accounts only, and adds a
  // second row for it under the caller: the account then belongs to two users.
  ...([
    ["bob links alice's provider account", WHOLE_STEP],
    ["bob's accounts", "body[1]"],
  ] as const).map(
    ([step, path]): Allowed => ({
      scenario: "social: link-social with an ID token",
      step,
      path,
      contract: "§5 OAuth: explicit linking answers 409 ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER when the provider account belongs to another user",
    }),
  ),
  { endpoint: "POST /get-access-token", path: "code", betterAuth: "PROVIDER_NOT_SUPPORTED", portcullis: "PROVIDER_NOT_FOUND", contract: "§5 OAuth: 400 PROVIDER_NOT_FOUND (unknown provider, on every OAuth endpoint)" },
  ...([
    ["/oops?error=account_not_linked", "/oops?error=ACCOUNT_NOT_LINKED"],
    ["/oops?error=account_already_linked_to_different_user", "/oops?error=ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER"],
    ["/api/auth/error?error=state_mismatch", "/api/auth/error?error=STATE_MISMATCH"],
    ["/api/auth/error?error=state_not_found", "/api/auth/error?error=INVALID_CALLBACK_REQUEST"],
  ] as const).map(([ba, pc]): Allowed => ({
    endpoint: /^GET \/callback\//,
    path: "location",
    betterAuth: `<self>${ba}`,
    portcullis: `<self>${pc}`,
    contract: "§5 OAuth: callback failures redirect with ?error=<code>, the contract's codes (§9: to /error without errorCallbackURL)",
  })),
  ...["callback", "owner's get-session", "the squatter's session", "the squatter's password"].map(
    (step): Allowed => ({
      scenario: "social: a verified provider email and an unverified local account (pre-account takeover)",
      step,
      path: WHOLE_STEP,
      contract: "§5 OAuth, linking safety: a verified provider email links into an unverified local account and removes the unproven password and sessions (better-auth refuses to link: account_not_linked)",
    }),
  ),
  { scenario: "reset: request, follow the link, set a new password", step: "new password", path: "body.user.emailVerified", betterAuth: false, portcullis: true, contract: "§5 OAuth, linking safety: a password reset proves the address (the email becomes verified)" },

  // §6 Admin
  { endpoint: "GET /admin/list-users", path: "body.limit", betterAuth: A, portcullis: 100, contract: "§6 Admin: list-users answers { users, total, limit, offset }" },
  { endpoint: "GET /admin/list-users", path: "body.offset", betterAuth: A, portcullis: 0, contract: "§6 Admin: list-users answers { users, total, limit, offset }" },
  { scenario: "admin: list-audit-events (a Portcullis extension)", step: "list-audit-events", path: WHOLE_STEP, contract: "§6 Admin: GET /admin/list-audit-events is ours (better-auth: 404); its content is asserted in the scenario" },

  // §7 Device authorization
  { endpoint: /^(POST \/device\/code|GET \/device)$/, path: "body.user_code", betterAuth: "XXXXXXXX", portcullis: "XXXX-XXXX", contract: "§7 Device: user codes are returned as XXXX-XXXX" },
  { endpoint: "POST /device/code", path: "body.verification_uri_complete", betterAuth: "<self>/device?user_code=XXXXXXXX", portcullis: "<self>/device?user_code=XXXX-XXXX", contract: "§7 Device: user codes are returned as XXXX-XXXX" },
  { scenario: "device: polling too fast, wrong client, unknown codes", step: "verify, code in lower case without the dash", path: WHOLE_STEP, contract: "§7 Device: user codes are accepted with or without the dash, any case" },
  ...([
    ["code", "VALIDATION_ERROR", "invalid_request"],
    ["body.message", "<message>", A],
    ["body.error_description", A, "<message>"],
  ] as const).map(([path, ba, pc]): Allowed => ({
    endpoint: "POST /device/code",
    path,
    betterAuth: ba,
    portcullis: pc,
    contract: "§7 Device (RFC 8628 §3.2): device authorization errors are RFC 6749 §5.2 bodies { error, error_description }",
  })),

  // §10 Plugins beyond the seed: two-factor and passkeys
  ...([
    ["sessionCookie", "set"],
    ["authToken", true],
  ] as const).flatMap(([path, ba]): Allowed[] => [
    { scenario: /^two-factor: /, step: /^activate /, path, betterAuth: ba, portcullis: A, contract: KEEPS_SESSION },
    { scenario: "two-factor: a mailed code to a signed-in user", step: "verify-otp", path, betterAuth: ba, portcullis: A, contract: KEEPS_SESSION },
    { endpoint: "POST /two-factor/disable", path, betterAuth: ba, portcullis: A, contract: KEEPS_SESSION },
  ]),
  { scenario: "two-factor: enable, then the first TOTP code turns it on", step: "get-session: on", path: "body.session.id", contract: KEEPS_SESSION },
  { scenario: /^two-factor: /, step: /^activate /, path: "body.user.twoFactorEnabled", betterAuth: false, portcullis: true, contract: "§2 Records: a response carries the user as it is: the verify-totp that turns two-factor on answers twoFactorEnabled: true (better-auth answers the user as read before the change)" },
  { scenario: "two-factor: an accepted TOTP code does not work a second time", step: "the same code again", path: WHOLE_STEP, contract: "§10 Plugins (RFC 6238 §5.2): each TOTP code is usable once: the replay of an accepted code in the same window fails with 401 INVALID_CODE" },
  { endpoint: "POST /passkey/verify-registration", path: "status", betterAuth: 500, portcullis: 400, contract: "§1 Conventions (never 500 on a malformed attestation; bad input gets a clear 4xx): 400 FAILED_TO_VERIFY_REGISTRATION" },
  { endpoint: /^POST \/passkey\/(delete|update)-passkey$/, path: "status", betterAuth: 404, portcullis: 401, contract: "§10 Plugins: an unknown passkey id and someone else's are the same 401 PASSKEY_NOT_FOUND (no existence oracle)" },

  // §10 Plugins: JWTs
  ...["the token's header and claims", "get-session's set-auth-jwt"].flatMap((step): Allowed[] => [
    { scenario: "jwt: /token, /jwks, set-auth-jwt", step, path: "body.claims", portcullis: "aud email exp iat iss role sid sub", contract: "§10 Plugins: a JWT carries sub, sid, email, role, iss, aud, iat, exp, never the user row better-auth copies into every token" },
    { scenario: "jwt: /token, /jwks, set-auth-jwt", step, path: "body.typ", betterAuth: null, portcullis: "JWT", contract: "§10 Plugins: a JWT's header has typ JWT (RFC 8725 §3.11 explicit typing)" },
  ]),
  { scenario: "jwt: /token, /jwks, set-auth-jwt", step: /^(jwks|the JWK Set's members)$/, path: /^body(\.keys)?\[0\](\.use)?$/, contract: "§10 Plugins: the JWKS keys carry use: sig" },
  {
    scenario: "jwt: /token, /jwks, set-auth-jwt", step: /^(jwks|the JWK Set's members)$/, path: /^body(\.keys)?\[1\]$/, betterAuth: A,
    contract: "§10 Plugins: with the OpenID provider on (its default), the JWKS also publishes the provider's RS256 ID-token key after jwt.alg's: OpenID Discovery §3 requires RS256 (docs/oidc-provider.md)",
  },
  // §10 Plugins: API keys (docs/machine-access.md)
  { scenario: /^api-key: /, step: "create without a session", path: "code", betterAuth: "UNAUTHORIZED_SESSION", portcullis: "UNAUTHORIZED", contract: "§3 Sessions: no session on an endpoint that needs one is 401 UNAUTHORIZED" },
  ...["change-password with the key", "create a key with the key", "revoke-sessions with the key"].map(
    (step): Allowed => ({ scenario: "api-key: x-api-key sessions", step, path: WHOLE_STEP, contract: "§6 Admin: a session backed by an API key never creates lasting access nor touches account security: 403 API_KEY_SESSION_NOT_ALLOWED (one guard with the impersonation limits)" }),
  ),
  ...([["authToken", true], ["sessionCookie", "set"]] as const).map(
    ([path, betterAuth]): Allowed => ({ scenario: "api-key: x-api-key sessions", step: "update-user with the key", path, betterAuth, portcullis: A, contract: "§10 Plugins: API keys are shown once: a key-backed request never turns the key into a session cookie or a set-auth-token" }),
  ),
  { scenario: "api-key: x-api-key sessions", step: "get-session with the key", path: /^body\.session\.(ipAddress|userAgent|impersonatedBy)$/, portcullis: null, contract: "§10 Plugins: a key-backed session is no stored session: it carries no client address or agent (§2 Records: impersonatedBy is null, never absent)" },
  // §10 Plugins beyond the seed: passwordless (magic links, email one-time codes)
  {
    scenario: "magic link: made-up tokens and foreign callbacks",
    step: "(unread mails)",
    path: "(step)",
    contract: "§3 Sessions: a foreign callbackURL is refused with 403 INVALID_CALLBACK_URL before anything is mailed (better-auth's test mode skips the check and mails the link)",
  },
  {
    scenario: /^magic link: /,
    step: /mail$/,
    path: "body",
    betterAuth: "<self>/api/auth/magic-link/verify?callbackURL=/&token=<token>",
    portcullis: "<self>/api/auth/magic-link/verify?token=<token>",
    contract: "§10 Passwordless: a magic link carries the callbackURL the request gave, and none otherwise (better-auth puts `callbackURL=/`, its own root, in every link)",
  },
  {
    endpoint: "GET /magic-link/verify",
    path: "status",
    betterAuth: 302,
    portcullis: 400,
    contract: "§10 Passwordless: a bad, used or expired link opened without callbacks is 400 INVALID_TOKEN (JSON; a browser gets the /error page); better-auth redirects every failure to its own \"/\"",
  },
  {
    scenario: "magic link: made-up tokens and foreign callbacks",
    step: "a made-up token with a literal % in the callbackURL",
    path: "status",
    betterAuth: 500,
    portcullis: 302,
    contract: "§1 Conventions (never 500 on bad input): query values are decoded once, so a literal % is just a character (better-auth decodes them twice and throws URIError); the made-up token then goes to the callback with ?error=INVALID_TOKEN",
  },
  ...["open the link", "press the confirm button"].map(
    (step): Allowed => ({
      scenario: "magic link: a browser follows the mailed link to the callbacks",
      step,
      path: WHOLE_STEP,
      contract: "§10 Passwordless: a browser GET of a magic link shows a confirm page and signs in at its POST, so mail scanners that fetch links do not use them up (better-auth signs in on the GET and has no POST)",
    }),
  ),
  ...(["status", "code"] as const).map(
    (path): Allowed => ({
      scenario: "email OTP: three wrong tries, then TOO_MANY_ATTEMPTS; a new code works",
      step: "the right code once more",
      path,
      betterAuth: path === "status" ? 400 : "INVALID_OTP",
      portcullis: path === "status" ? 403 : "TOO_MANY_ATTEMPTS",
      contract: "§10 Passwordless: a code out of tries answers 403 TOO_MANY_ATTEMPTS until a new one is sent (better-auth deletes it after saying so once, then answers INVALID_OTP)",
    }),
  ),
  {
    endpoint: "POST /sign-in/email-otp",
    path: "body.user.emailVerified",
    betterAuth: false,
    portcullis: true,
    contract: "§2 Records: a response carries the user as it is: a code sign-in verifies the address, and answers emailVerified: true (better-auth answers the user as read before the change)",
  },
  {
    scenario: "email OTP: check-verification-otp of a sign-in code for a new address",
    step: "check-verification-otp",
    path: WHOLE_STEP,
    contract: "§10 Passwordless: a right sign-in code for an address without an account checks out, since the sign-in creates it (better-auth answers 400 USER_NOT_FOUND)",
  },
  // §10 Plugins: the OpenID provider (docs/oidc-provider.md "Differences from @better-auth/oauth-provider")
  {
    scenario: "oidc-provider: a user's clients and consents",
    step: "create-client without redirect_uris",
    path: /^(code|body\.(message|error_description))$/,
    contract: "§10 Plugins: the OpenID provider's client metadata errors are RFC 7591 §3.2.2 `invalid_redirect_uri` in RFC 6749's { error, error_description } shape (better-auth: a VALIDATION_ERROR)",
  },

  // §10 Organizations (docs/organizations.md "Differences from better-auth")
  {
    endpoint: /^(POST|GET) \/organization\//,
    path: /^body(\[\d+\])?\.metadata$/,
    contract: "§10 Organizations: an organization's `metadata` is an object or null on every route (better-auth: absent when unset, a JSON string on list, set-active and delete)",
  },
  {
    scenario: "api-key: x-api-key sessions",
    step: "get-session with the key",
    path: /^body\.session\.active(Organization|Team)Id$/,
    portcullis: null,
    contract: "§2 Sessions: every session record carries `activeOrganizationId` and `activeTeamId`, null when none; a key-backed session works in no organization (better-auth's key session leaves both out)",
  },
  {
    scenario: /^organization:/,
    step: "get-session after delete",
    path: "body.session.activeTeamId",
    portcullis: null,
    contract: "§10 Organizations: deleting an organization clears the active organization and team of every session working in it (better-auth keeps the deleted organization's team active)",
  },
  {
    scenario: "organization: teams",
    step: "get-session after leaving the team",
    path: "body.session.activeTeamId",
    portcullis: null,
    contract: "§10 Organizations: a user removed from a team no longer has it as any session's active team (better-auth keeps it active)",
  },
  {
    scenario: "organization: the membership limit on accept-invitation and add-member",
    step: "an admin adds dan past the limit",
    path: WHOLE_STEP,
    contract: "§10 Organizations: add-member is a route for admins (`user: [\"update\"]`) besides the library, under the same membership limit (403 ORGANIZATION_MEMBERSHIP_LIMIT_REACHED, as accept-invitation); better-auth's add-member is server-only, 404 over HTTP (docs/organizations.md \"Differences from better-auth\")",
  },
  ...["status", "code"].map(
    (path): Allowed => ({
      scenario: /^organization:/,
      step: "bob removes the owner",
      path,
      portcullis: path === "status" ? 403 : "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER",
      contract: "§10 Organizations: only an owner removes an owner, 403 YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER (better-auth answers 400 YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER whoever the owners are)",
    }),
  ),
  {
    scenario: "oidc-provider: the authorization request of a signed-in user",
    step: "authorize: to the consent page",
    path: WHOLE_STEP,
    contract: "§10 Plugins: where better-auth is looser the specs win: a browser navigation to the authorization endpoint is redirected (RFC 6749 §4.1.1, 302 to the consent page; better-auth answers 200 JSON { redirect, url } to every caller, as Portcullis does to a fetch asking for JSON), and the consent page's signed query is Portcullis's own (bound to the session: docs/oidc-provider.md \"Pages\")",
  },
  {
    scenario: "oidc-provider: the authorization request of a signed-in user",
    step: "authorize as a fetch: JSON",
    path: WHOLE_STEP,
    contract: "§10 Plugins: where better-auth is looser the specs win: the authorization endpoint redirects the user agent (RFC 6749 §4.1.1, 302) unless the request asks for JSON only (Accept: application/json without text/html); better-auth's client does not ask for JSON only, and better-auth answers it 200 JSON { redirect, url }",
  },
  {
    scenario: "oidc-provider: the authorization request of a signed-in user",
    step: "authorize: an unregistered redirect_uri",
    path: WHOLE_STEP,
    contract: "§10 Plugins: where better-auth is looser the specs win: never redirected to an unregistered URI (RFC 6749 §4.1.2.1), the browser is redirected (302) to the error page with the error code INVALID_REDIRECT_URI (better-auth: 200 JSON { redirect, url } with invalid_redirect)",
  },
  // The app's own sign-in and consent pages (scenarios/oidc-pages.ts; docs/oidc-provider.md "Pages").
  {
    scenario: /^oidc-provider pages:/,
    step: "authorize: to the app's sign-in page",
    path: WHOLE_STEP,
    contract: "§10 Plugins: where better-auth is looser the specs win: a browser navigation to the authorization endpoint is redirected (RFC 6749 §4.1.1, 302 to the sign-in page; better-auth answers 200 JSON { redirect, url }); the page's address is compared in the step \"the sign-in page's address\"",
  },
  {
    scenario: /^oidc-provider pages:/,
    step: /^sign-in\/email (on the sign-in page|with the page's oauth_query)$/,
    path: "body.url",
    contract: "§10 Plugins: the signed oauth_query's own parameters are Portcullis's (pc_iat for ba_iat, and pc_sid binding the consent step to the session it was shown to: docs/oidc-provider.md \"Pages\", \"Security\"); the consent page and the authorize request its address carries are compared in the step \"the sign-in page sends the browser to\"",
  },
  ...[
    ["the sign-in page's address", "ba_iat ba_param exp sig", "ba_param exp pc_iat sig"],
    ["the sign-in page sends the browser to", "ba_iat ba_param exp sig", "ba_param exp pc_iat pc_sid sig"],
  ].map(
    ([step, betterAuth, portcullis]): Allowed => ({
      scenario: /^oidc-provider pages:/,
      step,
      path: "body.signature",
      betterAuth,
      portcullis,
      contract: "§10 Plugins: the signed oauth_query's own parameters are Portcullis's: pc_iat (when it was signed) for better-auth's ba_iat, and on the consent page pc_sid, a digest of the session it was shown to (consent is bound to that session: docs/oidc-provider.md \"Security\"); both list what they sign in ba_param, as oauthProviderClient reads it",
    }),
  ),
  {
    scenario: "oidc-provider pages: a tampered oauth_query is refused",
    step: /tampered oauth_query$/,
    path: "code",
    betterAuth: "invalid_signature",
    portcullis: "INVALID_OAUTH_QUERY",
    contract: "§1 Conventions and §10 Plugins: errors are { code, message }; a forged or expired oauth_query is 400 INVALID_OAUTH_QUERY, refused before the sign-in or the consent runs (better-auth: 400 { error: \"invalid_signature\" }; docs/oidc-provider.md \"Pages\")",
  },
  {
    scenario: /^oidc-provider pages:/,
    step: "token: the code again",
    path: "status",
    betterAuth: 401,
    portcullis: 400,
    contract: "§10 Plugins: where better-auth is looser the specs win: a used code is RFC 6749 §5.2 invalid_grant with 400 (better-auth: 401), and revokes what it issued (RFC 6749 §4.1.2)",
  },
];

/**
 * Not differences but better-auth configurations (targets.ts Variant): where the contract's
 * rule is better-auth's behaviour under one option in one case and under another in the next,
 * the scenario runs better-auth with the option that gives the contract's behaviour.
 */
export const variants = {
  deleteUserMail:
    "§9 Account self-service: delete-user deletes at once from a fresh session or with the right password, and mails a link " +
    "otherwise. better-auth with `sendDeleteAccountVerification` always mails, without it never mails (400 SESSION_EXPIRED " +
    "for a stale session): the delete-at-once scenarios compare with it off, the mailed-link scenarios with it on.",
} as const;
