import { createPortcullisClient, isPortcullisClientError, type RouterInputs, type RouterOutputs } from "portcullis/client";

/**
 * The console's only way to the service: the typed tRPC client apps use. Same origin, so the
 * browser sends the session cookie and an Origin header the service's CSRF check accepts.
 */
export const api = createPortcullisClient({ url: window.location.origin });

export type SessionWithUser = NonNullable<RouterOutputs["getSession"]>;
export type User = RouterOutputs["admin"]["getUser"];
export type UserList = RouterOutputs["admin"]["listUsers"];
export type ListUsersQuery = NonNullable<RouterInputs["admin"]["listUsers"]>;
export type UserSession = RouterOutputs["admin"]["listUserSessions"]["sessions"][number];
export type Account = RouterOutputs["admin"]["listUserAccounts"]["accounts"][number];
export type DeviceCode = RouterOutputs["admin"]["listUserDeviceCodes"]["deviceCodes"][number];
export type UserApiKey = RouterOutputs["admin"]["listApiKeys"]["apiKeys"][number];
export type AuditPage = RouterOutputs["admin"]["listAuditEvents"];
export type DashboardData = RouterOutputs["admin"]["dashboard"];
export type AuditEvent = AuditPage["events"][number];
export type AuditQuery = NonNullable<RouterInputs["admin"]["listAuditEvents"]>;
export type AdminOrganizationPage = RouterOutputs["admin"]["listOrganizations"];
export type AdminOrganization = RouterOutputs["admin"]["getOrganization"];
export type UserOrganization = RouterOutputs["admin"]["listUserOrganizations"][number];
export type OAuthClient = RouterOutputs["admin"]["oauth2"]["listClients"]["clients"][number];
export type OAuthClientInput = RouterInputs["admin"]["oauth2"]["createClient"];
export type ClientConsent = RouterOutputs["admin"]["oauth2"]["getClientConsents"][number];

/** A failure as the console shows it: the server's words and its code, never a bare "error". */
export interface Problem {
  message: string;
  code: string | null;
  status: number | null;
  /** The fields a VALIDATION_ERROR names. */
  issues: { path: string; message: string }[];
  requestId: string | null;
}

export function describeError(err: unknown): Problem {
  if (isPortcullisClientError(err)) {
    const data = err.data;
    // No data: the answer was not tRPC's (a proxy's page, a dropped connection).
    if (!data) return { message: `The service could not be reached: ${err.message}`, code: null, status: null, issues: [], requestId: null };
    return {
      message: err.message,
      code: data.authCode ?? null,
      status: data.httpStatus ?? null,
      issues: (data.issues ?? []).map((i) => ({ path: String(i.path ?? ""), message: i.message })),
      requestId: data.requestId ?? null,
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { message: `Something failed in the console: ${message}`, code: null, status: null, issues: [], requestId: null };
}
