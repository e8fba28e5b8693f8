import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/*
 * Organizations (better-auth's organization plugin models; docs/organizations.md). Uniqueness is
 * the database's: one slug, one membership per (organization, user), one team membership per
 * (team, user), one role name per organization. Children go with their organization (cascade),
 * memberships with their user.
 */

export const Organization = defineEntity({
  name: "Organization",
  tableName: "organizations",
  properties: (p) => ({
    id: p.uuid().primary(),
    name: p.string().length(255),
    slug: p.string().length(255).unique("organizations_slug_unique"),
    logo: p.text().nullable(),
    /** A JSON object, as the client sent it. */
    metadata: p.text().nullable(),
    createdAt: p.datetime(),
  }),
});

/**
 * `role`: comma-joined role names (better-auth's). The (organization, createdAt, id) index walks
 * list-members' default order; (organization, role, id) its role filter and the owner count; the
 * unique (organization, user) index answers "is this user a member, with which role".
 */
export const Member = defineEntity({
  name: "Member",
  tableName: "members",
  uniques: [{ properties: ["organization", "user"], name: "members_organization_user_unique" }],
  indexes: [
    { properties: ["organization", "createdAt", "id"], name: "members_organization_created_at_id_index" },
    { properties: ["organization", "role", "id"], name: "members_organization_role_id_index" },
  ],
  properties: (p) => ({
    id: p.uuid().primary(),
    organization: p.manyToOne(Organization).ref().deleteRule("cascade"),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("members_user_id_index"),
    role: p.string().length(255),
    createdAt: p.datetime(),
  }),
});

/**
 * An invitation; its `id` (24 random bytes, base64url) is what the mail carries. It is not a
 * bearer credential: only the signed-in user whose verified address is `email` may use it.
 */
export const Invitation = defineEntity({
  name: "Invitation",
  tableName: "invitations",
  indexes: [
    { properties: ["organization", "status"], name: "invitations_organization_status_index" },
    { properties: ["email", "status"], name: "invitations_email_status_index" },
  ],
  properties: (p) => ({
    id: p.string().length(64).primary(),
    organization: p.manyToOne(Organization).ref().deleteRule("cascade"),
    email: p.string().length(320),
    role: p.string().length(255),
    teamId: p.uuid().nullable(),
    /** pending | accepted | rejected | canceled */
    status: p.string().length(16),
    inviterId: p.uuid(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
  }),
});

export const Team = defineEntity({
  name: "Team",
  tableName: "teams",
  properties: (p) => ({
    id: p.uuid().primary(),
    organization: p.manyToOne(Organization).ref().deleteRule("cascade").index("teams_organization_id_index"),
    name: p.string().length(255),
    createdAt: p.datetime(),
    updatedAt: p.datetime().nullable(),
  }),
});

export const TeamMember = defineEntity({
  name: "TeamMember",
  tableName: "team_members",
  uniques: [{ properties: ["team", "user"], name: "team_members_team_user_unique" }],
  properties: (p) => ({
    id: p.uuid().primary(),
    team: p.manyToOne(Team).ref().deleteRule("cascade"),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("team_members_user_id_index"),
    createdAt: p.datetime(),
  }),
});

/** A role an organization's owners defined at run time (dynamic access control): `permission` is its grants as JSON. */
export const OrganizationRole = defineEntity({
  name: "OrganizationRole",
  tableName: "organization_roles",
  uniques: [{ properties: ["organization", "role"], name: "organization_roles_organization_role_unique" }],
  properties: (p) => ({
    id: p.uuid().primary(),
    organization: p.manyToOne(Organization).ref().deleteRule("cascade"),
    role: p.string().length(255),
    permission: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime().nullable(),
  }),
});

export type IOrganization = InferEntity<typeof Organization>;
export type IMember = InferEntity<typeof Member>;
export type IInvitation = InferEntity<typeof Invitation>;
export type ITeam = InferEntity<typeof Team>;
export type ITeamMember = InferEntity<typeof TeamMember>;
export type IOrganizationRole = InferEntity<typeof OrganizationRole>;
