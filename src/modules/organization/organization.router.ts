import { actorOf } from "../../core/index.ts";
import { router } from "../../trpc/init.ts";
import { targetOrganizationId } from "./access.ts";
import { invitationProcedures } from "./invitations.router.ts";
import { listMembers } from "./list-members.service.ts";
import * as members from "./members.service.ts";
import * as orgs from "./organizations.service.ts";
import * as schema from "./organization.schema.ts";
import { procedures } from "./procedures.ts";
import { teamAndRoleProcedures } from "./teams.router.ts";

/*
 * better-auth's organization plugin endpoints (rest-bridge/routes.ts, `// organization`;
 * docs/organizations.md); 404 when `organization.enabled` is false. What adds a membership
 * (create, accept-invitation) needs lasting access: an impersonation session cannot make the
 * impersonated user join anything (core/access.ts).
 */
const { authed, lastingAccess } = procedures;

const organizationRouterBuilt = router({
  create: lastingAccess.input(schema.createInput).mutation(({ ctx, input }) => orgs.createOrganization(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  update: authed.input(schema.updateInput).mutation(({ ctx, input }) => orgs.updateOrganization(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  delete: authed.input(schema.organizationIdInput).mutation(({ ctx, input }) => orgs.deleteOrganization(ctx.app, ctx.em, ctx.auth, ctx.req, input.organizationId)),
  getFullOrganization: authed.input(schema.getFullInput).query(({ ctx, input }) => orgs.getFullOrganization(ctx.app, ctx.em, ctx.auth, input ?? {})),
  list: authed.query(({ ctx }) => orgs.listOrganizations(ctx.em, ctx.auth.user.id)),
  checkSlug: authed.input(schema.checkSlugInput).mutation(({ ctx, input }) => orgs.checkSlug(ctx.em, input.slug)),
  setActive: authed.input(schema.setActiveInput).mutation(({ ctx, input }) => orgs.setActiveOrganization(ctx.app, ctx.em, ctx.auth, input)),

  listMembers: authed.input(schema.listMembersInput).query(({ ctx, input }) => listMembers(ctx.app, ctx.em, ctx.auth, input ?? {})),
  /** better-auth's server-only add-member: here for admins (`user: ["update"]`) and the library's caller. */
  addMember: procedures.withPermission("user", ["update"]).input(schema.addMemberInput).mutation(({ ctx, input }) => members.addMember(ctx.app, ctx.em, actorOf(ctx.auth, ctx.req), input)),
  removeMember: authed.input(schema.removeMemberInput).mutation(({ ctx, input }) => members.removeMember(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  updateMemberRole: authed.input(schema.updateMemberRoleInput).mutation(({ ctx, input }) => members.updateMemberRole(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  leave: authed.input(schema.organizationIdInput).mutation(({ ctx, input }) => members.leaveOrganization(ctx.app, ctx.em, ctx.auth, ctx.req, input.organizationId)),
  getActiveMember: authed.query(({ ctx }) => members.getActiveMember(ctx.em, ctx.auth)),
  getActiveMemberRole: authed.input(schema.activeMemberRoleInput).query(async ({ ctx, input }) => {
    const organizationId = input?.organizationSlug ? await orgs.organizationIdBySlug(ctx.em, input.organizationSlug) : targetOrganizationId(ctx.auth, input?.organizationId);
    return members.getActiveMemberRole(ctx.em, ctx.auth, organizationId, input?.userId);
  }),
  /** The REST bridge answers it on a lean path too (rest-bridge/lean.ts), with the same checkPermission. */
  hasPermission: authed.input(schema.hasPermissionInput).mutation(({ ctx, input }) => members.checkPermission(ctx.app, () => ctx.em, ctx.auth, input)),
  ...invitationProcedures,
  ...teamAndRoleProcedures,
});

type OrganizationRouterType = typeof organizationRouterBuilt;
/**
 * The organization family's procedures. An interface, so that declarations name it instead of spelling it out: spelled out in
 * the app router, the composed type passes the compiler's limit for one declaration (TS7056).
 */
export interface OrganizationRouter extends OrganizationRouterType {}
export const organizationRouter: OrganizationRouter = organizationRouterBuilt;
