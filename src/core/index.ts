/**
 * The kernel: what every family uses (docs/architecture.md "The kernel"). A family imports this
 * file and `src/trpc`, never another family; what a family adds to the kernel (what it holds for
 * a user, a sign-in step, a mailed link kind) it registers (registry.ts). Read this file first.
 */
import type { App } from "../app.ts";
import type { EmailLink as EmailLinkOf, EmailProof as EmailProofOf, Family as FamilyOf, Holding as HoldingOf, SignInStep as SignInStepOf, TokenGrant as TokenGrantOf } from "./registry.ts";

// Time and ids
export { systemClock, type Clock } from "./clock.ts";
export { isUuid, uuidv7 } from "./ids.ts";

// Users, identity rules and the password credential
export { findUser, getUser, listAccounts } from "./users.ts";
export { checkPasswordLength, isValidUsername, normalizeEmail, parseEmail, parseUsername } from "./identity.ts";
export { CREDENTIAL_PROVIDER, credentialAccount, storePassword } from "./credential.ts";

// Sessions: issue, resolve, end (every cache eviction is in there), the one view, the cookie
export {
  bannedUser, insertSessionUnlessBanned, isBanActive, issueSession, newSession, resolveSession, writeSignUp, type AuthMethod, type IssuedSession, type IssueOptions, type NewSession, type RequestInfo, type ResolvedSession, type SignInAttempt,
} from "./session/sessions.ts";
export {
  apiKeyChanged, endImpersonationsBy, endSession, endSessionByTokenHash, endSessionsOf, listActiveSessions, membershipsChanged, revokeAllSessions, revokeOwnSession, userChanged,
} from "./session/revoke.ts";
export { membershipOf } from "./session/memberships.ts";
export { newUserRow, publicAccount, publicSession, publicUser, userRow, type NewUserFields, type PublicSession, type PublicUser } from "./session/view.ts";
export { listedToken, sessionRefOf, type SessionRef } from "./session/handles.ts";
export { answerGetSession, answerKeySession, type GetSessionAnswer } from "./session/get-session.ts";
export { readApiKey, resolveKeyPrincipal } from "./session/api-key-principal.ts";
export { claimKeyUse } from "./session/api-key-usage.ts";
export { sessionCookieMaxAgeSec } from "./session/cookie.ts";
export { clearActiveOrganization, clearActiveTeam, setActiveContext } from "./session/active.ts";

// Single-use tokens (mailed links, flow state, challenges) and email proof
export {
  consumeToken, consumeVerification, findLiveToken, issuedRecently, issueToken, mailTokenLater, purposeOf, storeVerification,
  USER_TOKEN_PURPOSES, type IssuedToken, type TokenPurpose, type TokenValue,
} from "./single-use-tokens.ts";
export {
  EMAIL_VERIFICATION, prepareVerification, RESEND_INTERVAL_SEC, sendsVerificationOnSignUp, sendVerificationLater,
  type Recipient, type VerificationValue,
} from "./email-proof.ts";

// What a user holds, and the registry families fill in
export { addressChanged, addressProven, deleteUserAndEverything, passwordChanged, removeEverythingUserHolds, resetPasswordOf } from "./holdings.ts";
export { buildRegistry, type GateUser, type PreparedMail, type Removal, type SecondStep, type WayIn } from "./registry.ts";
/** What a family registers, for this service's App (core/registry.ts). */
export type Family = FamilyOf<App>;
export type Holding = HoldingOf<App>;
export type SignInStep = SignInStepOf<App>;
export type EmailLink = EmailLinkOf<App>;
export type EmailProof = EmailProofOf<App>;
export type TokenGrant = TokenGrantOf<App>;

// Ways in: the sign-in gate, step-up, the rule of lasting access
export { assertLastingAccess, assertNotKeyPrincipal, keyPrincipalRefusal, lastingAccessRefusal } from "./access.ts";
export { hasSecondStep, secondStep, type SignedIn } from "./sign-in-gate.ts";
export { recordSignIn, type SignInMethod, type SignInOutcome } from "./sign-in-audit.ts";
export { signInByAddress, type AddressSignIn, type AddressSignInOptions, type ProvenAddress } from "./address-sign-in.ts";
export { isFresh, verifyCurrentPassword, type StepUp, type StepUpCaller, type WithoutPassword } from "./step-up.ts";

// Signing keys (JWTs, ID tokens, JWT access tokens) and jose, loaded on first use
export { publishedKeys, signingKey, type JwtAlg, type PublicJwk, type SigningKey } from "./signing-keys.ts";
export { loadJose } from "./jose.ts";

// Permissions and audit
export {
  assertPermission, BUILT_IN_ORGANIZATION_ROLES, BUILT_IN_ROLES, hasPermission, isAdminUser, ORGANIZATION_STATEMENTS, organizationGrantsSchema,
  roleGrantsSchema, rolesGrant, rolesOf, splitRoles, STATEMENTS, withBuiltInOrganizationRoles, withBuiltInRoles,
  type Action, type AdminSettings, type Grants, type OrganizationResource, type PermissionRequest, type Resource, type RoleGrants,
} from "./permissions.ts";
export { CACHE_FROM_ROWS, createTotalCache, FRESH_MS, MAX_AGE_MS, type TotalCache } from "./total-cache.ts";
export { actorOf, AUDIT_ACTIONS, recordAudit, type Actor, type AuditAction, type AuditEntry } from "./audit.ts";
