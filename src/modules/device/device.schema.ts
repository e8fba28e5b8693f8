import { z } from "zod";

/**
 * RFC 8628 §3.1 and §3.4 parameters. A missing or non-string parameter becomes undefined, so the
 * procedure answers the RFC's `invalid_request` (RFC 6749 §5.2) rather than a VALIDATION_ERROR.
 */
const oauthParam = z.string().optional().catch(undefined);

export const codeInput = z.object({
  client_id: oauthParam,
  scope: oauthParam,
});

export const tokenInput = z.object({
  grant_type: oauthParam,
  device_code: oauthParam,
  client_id: oauthParam,
});

export const verifyInput = z.object({ user_code: z.string().min(1, "is required").max(64) });

export const decisionInput = z.object({ userCode: z.string().min(1, "is required").max(64) });
