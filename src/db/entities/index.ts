export { User, type IUser } from "./user.ts";
export { Session, type ISession } from "./session.ts";
export { Account, type IAccount } from "./account.ts";
export { Verification, type IVerification } from "./verification.ts";
export { DeviceCode, type IDeviceCode } from "./device-code.ts";
export { AuditEvent, type IAuditEvent } from "./audit-event.ts";
export { RateLimit, type IRateLimit } from "./rate-limit.ts";
export { TwoFactor, TwoFactorBackupCode, TwoFactorChallenge, type ITwoFactor, type ITwoFactorBackupCode, type ITwoFactorChallenge } from "./two-factor.ts";
export { Passkey, type IPasskey } from "./passkey.ts";
export { BetterAuthImport, type IBetterAuthImport } from "./better-auth-import.ts";
export { JwksKey, type IJwksKey } from "./jwks-key.ts";
export { EmailOtp, type IEmailOtp } from "./email-otp.ts";
export { ApiKey, type IApiKey } from "./api-key.ts";
export {
  OauthAccessToken, OauthClient, OauthCode, OauthConsent, OauthRefreshToken,
  type IOauthAccessToken, type IOauthClient, type IOauthCode, type IOauthConsent, type IOauthRefreshToken,
} from "./oauth-provider.ts";
export {
  Invitation, Member, Organization, OrganizationRole, Team, TeamMember,
  type IInvitation, type IMember, type IOrganization, type IOrganizationRole, type ITeam, type ITeamMember,
} from "./organization.ts";

import { Account } from "./account.ts";
import { AuditEvent } from "./audit-event.ts";
import { DeviceCode } from "./device-code.ts";
import { RateLimit } from "./rate-limit.ts";
import { Session } from "./session.ts";
import { User } from "./user.ts";
import { Verification } from "./verification.ts";
import { TwoFactor, TwoFactorBackupCode, TwoFactorChallenge } from "./two-factor.ts";
import { Passkey } from "./passkey.ts";
import { BetterAuthImport } from "./better-auth-import.ts";
import { JwksKey } from "./jwks-key.ts";

import { EmailOtp } from "./email-otp.ts";
import { ApiKey } from "./api-key.ts";
import { OauthAccessToken, OauthClient, OauthCode, OauthConsent, OauthRefreshToken } from "./oauth-provider.ts";
import { Invitation, Member, Organization, OrganizationRole, Team, TeamMember } from "./organization.ts";

export const entities = [
  User,
  Session,
  Account,
  Verification,
  DeviceCode,
  AuditEvent,
  RateLimit,
  TwoFactor,
  TwoFactorBackupCode,
  TwoFactorChallenge,
  Passkey,
  BetterAuthImport,
  JwksKey,
  EmailOtp,
  ApiKey,
  OauthClient,
  OauthCode,
  OauthAccessToken,
  OauthRefreshToken,
  OauthConsent,
  Organization,
  Member,
  Invitation,
  Team,
  TeamMember,
  OrganizationRole,
];
