import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

export const Session = defineEntity({
  name: "Session",
  tableName: "sessions",
  properties: (p) => ({
    id: p.uuid().primary(),
    // SHA-256 of the session token; the token itself is never stored.
    tokenHash: p.string().length(64).unique("sessions_token_hash_unique"),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("sessions_user_id_index"),
    expiresAt: p.datetime().index("sessions_expires_at_index"),
    rememberMe: p.boolean().default(true),
    ipAddress: p.string().length(64).nullable(),
    userAgent: p.text().nullable(),
    impersonatedBy: p.uuid().nullable(),
    // The organization and team the session works in (docs/organizations.md); no foreign key: cleared by the family with the cache eviction.
    activeOrganizationId: p.uuid().nullable().index("sessions_active_organization_id_index"),
    activeTeamId: p.uuid().nullable(),
    // How it was authenticated: RFC 8176 `amr` values, space-separated ("" when none applies, as for
    // a social sign-in); null when not recorded (sessions older than the column). Never read on the
    // session check: only the OpenID provider's authorization step reads it (docs/oidc-provider.md).
    amr: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type ISession = InferEntity<typeof Session>;
