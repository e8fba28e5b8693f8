import { z } from "zod";
import { moduleDoc, requireOneOf } from "../../openapi/doc.ts";
import { sessionAnswer, sessionWithToken, statusTrue } from "../../openapi/records.ts";

/** OpenAPI docs of session.router.ts (src/openapi/doc.ts); `ok` is under maintenance.openapi.ts. */
export const sessionDoc = moduleDoc({
  tag: "Sessions",
  description: "The caller's sessions: read, list, sign out, revoke. A session is a cookie or `Authorization: Bearer <token>`.",
  operations: {
    getSession: {
      summary: "The caller's session and user",
      description: "`null` (still 200) when no live session is presented. Sliding expiry: re-sends the cookie when the session was extended.",
      access: "optional",
      output: sessionAnswer.nullable(),
    },
    signOut: {
      summary: "Sign out",
      description: "Deletes the presented session (if any) and clears the cookie.",
      access: "public",
      output: z.object({ success: z.literal(true) }),
    },
    listSessions: {
      summary: "The caller's active sessions",
      description: "`token` is the raw token for the calling session and an opaque revocation handle (never a credential) for the others.",
      access: "session",
      output: z.array(sessionWithToken),
    },
    revokeSession: {
      summary: "Revoke one of the caller's sessions",
      description: "By `token` (a listing's token or handle) or `id`; a session of someone else is left alone.",
      access: "session",
      output: statusTrue,
      input: requireOneOf("token", "id"),
      errors: ["API_KEY_SESSION_NOT_ALLOWED"],
    },
    revokeSessions: { summary: "Revoke all the caller's sessions", access: "session", output: statusTrue, errors: ["API_KEY_SESSION_NOT_ALLOWED"] },
    revokeOtherSessions: { summary: "Revoke the caller's other sessions", access: "session", output: statusTrue, errors: ["API_KEY_SESSION_NOT_ALLOWED"] },
  },
});
