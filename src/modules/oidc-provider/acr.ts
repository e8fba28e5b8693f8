import type { EntityManager } from "@mikro-orm/core";
import { Session } from "../../db/entities/index.ts";
import { parseScopes } from "./oidc-provider.rules.ts";

/**
 * Authentication context classes (OIDC Core §2 `acr`, §3.1.2.1 `acr_values`, §5.5.1.1) and
 * methods (`amr`, RFC 8176), from what the session recorded when it was issued
 * (docs/oidc-provider.md "acr and amr"). Two classes, both enforceable: one factor, and two
 * (the session's methods include `mfa`). A session that recorded nothing reaches neither: no
 * `acr`, no `amr`, and an essential request for one signs the user in again.
 */
export const ACR_ONE_FACTOR = "urn:portcullis:acr:1fa";
export const ACR_MFA = "urn:portcullis:acr:mfa";
export const ACR_VALUES_SUPPORTED = [ACR_ONE_FACTOR, ACR_MFA];

const LEVEL: Record<string, number> = { [ACR_ONE_FACTOR]: 1, [ACR_MFA]: 2 };

/** 0: not recorded; 1: one factor; 2: two. */
function levelOf(amr: string | null): number {
  if (amr === null) return 0;
  return amr.split(" ").includes("mfa") ? 2 : 1;
}

export interface AcrRequest {
  /** Essential (claims parameter, `essential: true`): the values one of which must be met; [] any class. Null: nothing essential. */
  essential: string[] | null;
  /** Voluntary (`acr_values`, or the claims parameter without `essential`), in order of preference. */
  preferred: string[];
}

function asValues(spec: Record<string, unknown>): string[] {
  if (typeof spec.value === "string") return [spec.value];
  return Array.isArray(spec.values) ? spec.values.filter((v): v is string => typeof v === "string") : [];
}

export function acrRequest(params: Record<string, string>): AcrRequest {
  const preferred = parseScopes(params.acr_values);
  let spec: unknown;
  try {
    spec = params.claims ? (JSON.parse(params.claims) as { id_token?: { acr?: unknown } }).id_token?.acr : undefined;
  } catch {
    spec = undefined; // the authorize step refuses a malformed claims parameter first
  }
  if (!spec || typeof spec !== "object") return { essential: null, preferred };
  const s = spec as Record<string, unknown>;
  if (s.essential === true) return { essential: asValues(s), preferred };
  return { essential: null, preferred: [...asValues(s), ...preferred] };
}

/** The class a session reached that meets the request: its value, null when none is claimed, "unmet" when an essential one is not met. */
export function chooseAcr(amr: string | null, request: AcrRequest): string | null | "unmet" {
  const level = levelOf(amr);
  const own = level === 2 ? ACR_MFA : level === 1 ? ACR_ONE_FACTOR : null;
  const met = (v: string) => (LEVEL[v] ?? Infinity) <= level;
  if (request.essential) {
    if (request.essential.length === 0) return own ?? "unmet";
    return request.essential.find(met) ?? "unmet";
  }
  return own && (request.preferred.find(met) ?? own);
}

/** The methods a session recorded (null: not recorded); read only when authorizing a client. */
export async function sessionAmr(em: EntityManager, sessionId: string): Promise<string | null> {
  const row = await em.findOne(Session, { id: sessionId }, { fields: ["amr"], disableIdentityMap: true });
  return row?.amr ?? null;
}

/** The ID token's `amr` (RFC 8176): absent when none was recorded or none applies. */
export function amrClaim(amr: string | null | undefined): string[] | undefined {
  return amr ? amr.split(" ") : undefined;
}
