import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Invitation, Organization, Team, User, type IInvitation } from "../../db/entities/index.ts";
import { randomToken } from "../../crypto/tokens.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { organizationInvitationEmail } from "../../mail/templates.ts";
import type { MailRequest } from "../../mail/types.ts";
import { actorOf, isUuid, mailTokenLater, normalizeEmail, recordAudit, setActiveContext, type RequestInfo, type ResolvedSession } from "../../core/index.ts";
import { assertMemberMay, findMembership, isOwner, lockOrganization, parseRoleInput, requireMembership, targetOrganizationId } from "./access.ts";
import { insertMember, joinTeamOf } from "./members.service.ts";
import { publicInvitation, publicMember } from "./views.ts";

/**
 * Invitations (better-auth's invite-member, accept/reject/cancel-invitation, get-invitation,
 * list-invitations, list-user-invitations; docs/organizations.md "Invitations"). The id is 24
 * random bytes: what the mail carries and every route takes. It is not a bearer credential:
 * only the signed-in user whose verified address is the invited one may see, accept or reject
 * it; a used, rejected, cancelled or expired invitation no longer works (a conditional update
 * from `pending` spends it once).
 */

type Request = RequestInfo & MailRequest;

/** The app's accept page with `?invitationId=` (`organization.invitationUrl`, default `{publicUrl}/accept-invitation`). */
function invitationLink(app: App, id: string): string {
  const url = new URL(app.config.organization.invitationUrl ?? `${app.config.publicUrl.replace(/\/$/, "")}/accept-invitation`);
  url.searchParams.set("invitationId", id);
  return url.toString();
}

/** The invitation mail goes out after the answer, under the per-address throttle; it carries no secret beyond the id. */
function mailInvitation(app: App, req: MailRequest, inv: { id: string; email: string; role: string; expiresAt: Date }, org: { id: string; name: string; slug: string }, inviter: { name: string; email: string }) {
  mailTokenLater(app, req, "organization-invitation", async () => {
    if (!(await app.addressLimiter.allow("organization-invitation", inv.email))) return null;
    const ttlSec = Math.max(0, Math.round((inv.expiresAt.getTime() - app.clock.now().getTime()) / 1000));
    const metadata = { invitationId: inv.id, organizationId: org.id, organizationName: org.name, organizationSlug: org.slug, role: inv.role, inviterName: inviter.name, inviterEmail: inviter.email };
    return { message: organizationInvitationEmail(inv.email, invitationLink(app, inv.id), ttlSec, metadata) };
  });
}

/**
 * POST /organization/invite-member: `invitation: ["create"]`; only owners invite owners. A
 * member's address, or one already invited (without `resend`), is 400; `resend` extends the
 * pending invitation and mails it again. `invitationLimit` pending invitations per organization,
 * counted with the organization locked.
 */
export async function inviteMember(app: App, em: EntityManager, auth: ResolvedSession, req: Request, input: { email: string; role: string | string[]; organizationId?: string | undefined; resend?: boolean | undefined; teamId?: string | undefined }) {
  const cfg = app.config.organization;
  const organizationId = targetOrganizationId(auth, input.organizationId, "ORGANIZATION_NOT_FOUND");
  const email = normalizeEmail(input.email);
  const now = app.clock.now();
  const expiresAt = new Date(now.getTime() + cfg.invitationExpiresIn * 1000);
  const result = await inTransaction(em, async (tx) => {
    const org = await lockOrganization(tx, organizationId);
    const member = await requireMembership(tx, organizationId, auth.user.id, "MEMBER_NOT_FOUND");
    await assertMemberMay(app, tx, member, { invitation: ["create"] }, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");
    const role = await parseRoleInput(app, tx, organizationId, input.role);
    if (isOwner(app, role) && !isOwner(app, member.role)) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE");
    const invitee = await tx.findOne(User, { email }, { fields: ["id"], disableIdentityMap: true });
    if (invitee && (await findMembership(tx, organizationId, invitee.id))) throw new AuthError("USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION");
    if (input.teamId) await assertTeamOf(app, tx, organizationId, input.teamId);
    const pending = await tx.findOne(Invitation, { organization: organizationId, email, status: "pending", expiresAt: { $gt: now } }, { disableIdentityMap: true });
    if (pending && !input.resend) throw new AuthError("USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION");
    let inv: IInvitation | (Omit<IInvitation, "organization"> & { organization: { id: string } });
    if (pending) {
      await tx.nativeUpdate(Invitation, { id: pending.id }, { expiresAt });
      inv = { ...pending, expiresAt };
    } else {
      if ((await tx.count(Invitation, { organization: organizationId, status: "pending", expiresAt: { $gt: now } })) >= cfg.invitationLimit) throw new AuthError("INVITATION_LIMIT_REACHED");
      const row = { id: randomToken(24), organization: organizationId, email, role, teamId: input.teamId ?? null, status: "pending", inviterId: auth.user.id, expiresAt, createdAt: now };
      await tx.insert(Invitation, row);
      inv = { ...row, organization: { id: organizationId } };
    }
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-invite-member", targetType: "organization", targetId: organizationId, metadata: { invitationId: inv.id, email, role: inv.role, resend: Boolean(pending) } });
    return { inv, org };
  });
  mailInvitation(app, req, result.inv, result.org, auth.user);
  return publicInvitation(result.inv as IInvitation);
}

async function assertTeamOf(app: App, tx: EntityManager, organizationId: string, teamId: string): Promise<void> {
  const team = app.config.organization.teams.enabled && isUuid(teamId) ? await tx.findOne(Team, { id: teamId, organization: organizationId }, { disableIdentityMap: true }) : null;
  if (!team) throw new AuthError("TEAM_NOT_FOUND");
}

/**
 * The invitation as its recipient sees it: the signed-in user's address must be the invited one
 * AND verified (else 403 YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION, the same for every id that
 * is not theirs, so ids cannot be probed); a used or cancelled one is 400 INVITATION_NOT_FOUND,
 * an expired one 400 INVITATION_EXPIRED.
 */
async function recipientsInvitation(app: App, em: EntityManager, auth: ResolvedSession, id: string): Promise<IInvitation> {
  const inv = await em.findOne(Invitation, { id }, { disableIdentityMap: true });
  if (!inv) throw new AuthError("INVITATION_NOT_FOUND");
  if (!auth.user.emailVerified || inv.email !== auth.user.email) throw new AuthError("YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION");
  if (inv.status !== "pending") throw new AuthError("INVITATION_NOT_FOUND");
  if (inv.expiresAt.getTime() <= app.clock.now().getTime()) throw new AuthError("INVITATION_EXPIRED");
  return inv;
}

/** Spends the invitation: `pending` → `status`, once (a conditional update); false when another request spent it first. */
async function spend(tx: EntityManager, id: string, status: "accepted" | "rejected" | "canceled"): Promise<boolean> {
  return (await tx.nativeUpdate(Invitation, { id, status: "pending" }, { status })) === 1;
}

/**
 * POST /organization/accept-invitation: the recipient joins with the invited role (and team),
 * under `membershipLimit` and `organizationLimit`; the organization becomes the session's active one.
 */
export async function acceptInvitation(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, id: string) {
  return inTransaction(em, async (tx) => {
    const inv = await recipientsInvitation(app, tx, auth, id);
    const organizationId = inv.organization.id;
    await lockOrganization(tx, organizationId);
    if (!(await spend(tx, id, "accepted"))) throw new AuthError("INVITATION_NOT_FOUND");
    const member = await insertMember(app, tx, organizationId, auth.user.id, inv.role);
    if (inv.teamId) await joinTeamOf(app, tx, organizationId, inv.teamId, auth.user.id);
    await setActiveContext(app, tx, { id: auth.session.id, userId: auth.user.id }, organizationId, inv.teamId ?? null);
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-accept-invitation", targetType: "organization", targetId: organizationId, metadata: { invitationId: id, memberId: member.id, role: inv.role } });
    return { invitation: publicInvitation({ ...inv, status: "accepted" }), member: publicMember(member) };
  });
}

/** POST /organization/reject-invitation: the recipient declines; `{ invitation, member: null }`. */
export async function rejectInvitation(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, id: string) {
  return inTransaction(em, async (tx) => {
    const inv = await recipientsInvitation(app, tx, auth, id);
    if (!(await spend(tx, id, "rejected"))) throw new AuthError("INVITATION_NOT_FOUND");
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-reject-invitation", targetType: "organization", targetId: inv.organization.id, metadata: { invitationId: id } });
    return { invitation: publicInvitation({ ...inv, status: "rejected" }), member: null };
  });
}

/** POST /organization/cancel-invitation: a member with `invitation: ["cancel"]` withdraws a pending one. */
export async function cancelInvitation(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, id: string) {
  return inTransaction(em, async (tx) => {
    const inv = await tx.findOne(Invitation, { id }, { disableIdentityMap: true });
    if (!inv) throw new AuthError("INVITATION_NOT_FOUND");
    const member = await requireMembership(tx, inv.organization.id, auth.user.id, "MEMBER_NOT_FOUND");
    await assertMemberMay(app, tx, member, { invitation: ["cancel"] }, "YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION");
    if (!(await spend(tx, id, "canceled"))) throw new AuthError("INVITATION_NOT_FOUND");
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-cancel-invitation", targetType: "organization", targetId: inv.organization.id, metadata: { invitationId: id } });
    return publicInvitation({ ...inv, status: "canceled" });
  });
}

/** GET /organization/get-invitation?id=: the recipient's view, with the organization's name and slug and the inviter's address. */
export async function getInvitation(app: App, em: EntityManager, auth: ResolvedSession, id: string) {
  const inv = await recipientsInvitation(app, em, auth, id);
  const org = await em.findOneOrFail(Organization, { id: inv.organization.id }, { disableIdentityMap: true });
  const inviter = await em.findOne(User, { id: inv.inviterId }, { fields: ["email"], disableIdentityMap: true });
  return { ...publicInvitation(inv), organizationName: org.name, organizationSlug: org.slug, inviterEmail: inviter?.email ?? null };
}

/** GET /organization/list-invitations: every invitation of an organization the caller belongs to, newest first. */
export async function listInvitations(em: EntityManager, auth: ResolvedSession, organizationId: string | undefined) {
  const orgId = targetOrganizationId(auth, organizationId);
  await requireMembership(em, orgId, auth.user.id, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  const rows = await em.find(Invitation, { organization: orgId }, { orderBy: { createdAt: "desc", id: "asc" }, limit: 1000, disableIdentityMap: true });
  return rows.map(publicInvitation);
}

/**
 * GET /organization/list-user-invitations: the pending, unexpired invitations to the caller's
 * address, only once it is verified (403 EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION): an
 * unproven address shows nobody's invitations.
 */
export async function listUserInvitations(app: App, em: EntityManager, auth: ResolvedSession) {
  if (!auth.user.emailVerified) throw new AuthError("EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION");
  const rows = await em.find(Invitation, { email: auth.user.email, status: "pending", expiresAt: { $gt: app.clock.now() } }, { populate: ["organization"], orderBy: { createdAt: "desc" }, limit: 1000, disableIdentityMap: true });
  return rows.map((i) => ({ ...publicInvitation(i), organizationName: i.organization.getEntity().name }));
}
