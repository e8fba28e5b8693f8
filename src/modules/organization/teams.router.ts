import { moduleProcedures } from "../../trpc/init.ts";
import * as schema from "./organization.schema.ts";
import * as roles from "./roles.service.ts";
import * as teams from "./teams.service.ts";

/** Teams: 404 unless `organization.teams.enabled` (and organizations are on). */
const teamProcedures = moduleProcedures("organization.teams", (c) => c.organization.enabled && c.organization.teams.enabled);
/** Dynamic roles: 404 unless `organization.dynamicAccessControl.enabled`. */
const roleProcedures = moduleProcedures("organization.dynamicAccessControl", (c) => c.organization.enabled && c.organization.dynamicAccessControl.enabled);

const t = teamProcedures.authed;
const r = roleProcedures.authed;

export const teamAndRoleProcedures = {
  createTeam: t.input(schema.createTeamInput).mutation(({ ctx, input }) => teams.createTeam(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  listTeams: t.input(schema.listTeamsInput).query(({ ctx, input }) => teams.listTeams(ctx.em, ctx.auth, input?.organizationId)),
  updateTeam: t.input(schema.updateTeamInput).mutation(({ ctx, input }) => teams.updateTeam(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  removeTeam: t.input(schema.removeTeamInput).mutation(({ ctx, input }) => teams.removeTeam(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  addTeamMember: t.input(schema.teamMemberInput).mutation(({ ctx, input }) => teams.addTeamMember(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  removeTeamMember: t.input(schema.teamMemberInput).mutation(({ ctx, input }) => teams.removeTeamMember(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  listTeamMembers: t.input(schema.listTeamMembersInput).query(({ ctx, input }) => teams.listTeamMembers(ctx.em, ctx.auth, input?.teamId)),
  setActiveTeam: t.input(schema.setActiveTeamInput).mutation(({ ctx, input }) => teams.setActiveTeam(ctx.app, ctx.em, ctx.auth, input.teamId)),
  listUserTeams: t.query(({ ctx }) => teams.listUserTeams(ctx.em, ctx.auth.user.id)),

  createRole: r.input(schema.createRoleInput).mutation(({ ctx, input }) => roles.createRole(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  updateRole: r.input(schema.updateRoleInput).mutation(({ ctx, input }) => roles.updateRole(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  deleteRole: r.input(schema.deleteRoleInput).mutation(({ ctx, input }) => roles.deleteRole(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  listRoles: r.input(schema.listRolesInput).query(({ ctx, input }) => roles.listRoles(ctx.app, ctx.em, ctx.auth, input?.organizationId)),
  getRole: r.input(schema.getRoleInput).query(({ ctx, input }) => roles.getRole(ctx.app, ctx.em, ctx.auth, input)),
};
