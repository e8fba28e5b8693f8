import { z } from "zod";
import { moduleDoc, requireFields } from "../../openapi/doc.ts";
import { DECISION_ERRORS } from "./device.router.ts";

/** approve and deny answer in RFC 6749 §5.2's names (device.router.ts); only approve checks the approver's ban. */
const { BANNED_USER: _banned, ...denyErrors } = DECISION_ERRORS;

const decided = z.object({ success: z.literal(true) });

/** OpenAPI docs of device.router.ts (src/openapi/doc.ts). */
export const deviceDoc = moduleDoc({
  tag: "Device authorization",
  description: "RFC 8628 device authorization grant, for CLIs and TVs. Errors of the token endpoints in RFC 6749 §5.2's shape.",
  operations: {
    "device.code": {
      summary: "Start a device authorization (RFC 8628 §3.1)",
      access: "public",
      output: z.object({
        device_code: z.string(),
        user_code: z.string().describe("XXXX-XXXX"),
        verification_uri: z.string(),
        verification_uri_complete: z.string(),
        expires_in: z.number(),
        interval: z.number(),
      }),
      oauthErrors: { INVALID_REQUEST: "invalid_request", INVALID_CLIENT: "invalid_client" },
      input: requireFields("client_id"),
    },
    "device.token": {
      summary: "Poll for the access token (RFC 8628 §3.4)",
      description: "`access_token` is a session token, answered once.",
      access: "public",
      output: z.object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number(), scope: z.string() }),
      oauthErrors: {
        INVALID_REQUEST: "invalid_request",
        UNSUPPORTED_GRANT_TYPE: "unsupported_grant_type",
        INVALID_GRANT: "invalid_grant",
        AUTHORIZATION_PENDING: "authorization_pending",
        SLOW_DOWN: "slow_down",
        EXPIRED_TOKEN: "expired_token",
        ACCESS_DENIED: "access_denied",
      },
      input: requireFields("grant_type", "device_code", "client_id"),
    },
    "device.verify": {
      summary: "Look up a user code (RFC 8628 §3.3)",
      description: "A signed-in caller claims a pending, unclaimed code; approve and deny then need that user.",
      access: "optional",
      output: z.object({ user_code: z.string(), status: z.enum(["pending", "approved", "denied"]) }),
      errors: ["INVALID_USER_CODE", "EXPIRED_USER_CODE"],
    },
    "device.approve": {
      summary: "Approve a claimed device code",
      access: "own-session",
      output: decided,
      oauthErrors: DECISION_ERRORS,
    },
    "device.deny": {
      summary: "Deny a claimed device code",
      access: "session",
      output: decided,
      oauthErrors: denyErrors,
    },
  },
});
