import * as schema from "./organization.schema.ts";
import * as invitations from "./invitations.service.ts";
import { procedures } from "./procedures.ts";

/** The invitation procedures of the organization router (organization.router.ts); accepting or rejecting needs lasting access. */
const { authed, lastingAccess } = procedures;

export const invitationProcedures = {
  inviteMember: authed.input(schema.inviteInput).mutation(({ ctx, input }) => invitations.inviteMember(ctx.app, ctx.em, ctx.auth, ctx.req, input)),
  acceptInvitation: lastingAccess.input(schema.invitationIdInput).mutation(({ ctx, input }) => invitations.acceptInvitation(ctx.app, ctx.em, ctx.auth, ctx.req, input.invitationId)),
  rejectInvitation: lastingAccess.input(schema.invitationIdInput).mutation(({ ctx, input }) => invitations.rejectInvitation(ctx.app, ctx.em, ctx.auth, ctx.req, input.invitationId)),
  cancelInvitation: authed.input(schema.invitationIdInput).mutation(({ ctx, input }) => invitations.cancelInvitation(ctx.app, ctx.em, ctx.auth, ctx.req, input.invitationId)),
  getInvitation: authed.input(schema.getInvitationInput).query(({ ctx, input }) => invitations.getInvitation(ctx.app, ctx.em, ctx.auth, input.id)),
  listInvitations: authed.input(schema.listInvitationsInput).query(({ ctx, input }) => invitations.listInvitations(ctx.em, ctx.auth, input?.organizationId)),
  listUserInvitations: authed.query(({ ctx }) => invitations.listUserInvitations(ctx.app, ctx.em, ctx.auth)),
};
