/** The organization plugin through organizationClient (docs/organizations.md). */
import { type Run, type Scenario } from "../runner.ts";
import { admin, signUp, type Person } from "./helpers.ts";

/** Sign-up, then the mailed verification link followed: invitations need a verified recipient (Portcullis). */
async function verifiedUser(s: Run, name: string): Promise<Person> {
  const person = await signUp(s, name);
  await s.call(`${name} asks for the verification mail`, person.actor, (c) => c.sendVerificationEmail({ email: person.email }));
  await s.browse(`${name} follows the verification link`, person.actor, await s.mail(`${name}'s verification mail`, person.email));
  return person;
}

async function orgOf(s: Run, owner: Person, slug: string) {
  const created = await s.call(`create ${slug}`, owner.actor, (c) => c.organization.create({ name: `Org ${slug}`, slug }));
  return s.need(created?.id, `${slug}'s id`);
}

export const organization: Scenario[] = [
  {
    name: "organization: create, read, update, list, check-slug, set-active, delete",
    async run(s) {
      const ann = await signUp(s, "ann");
      const slug = s.username("acme");
      const orgId = await orgOf(s, ann, slug);
      await s.call("get-session shows the active organization", ann.actor, (c) => c.getSession());
      await s.call("create with a taken slug", ann.actor, (c) => c.organization.create({ name: "Again", slug }));
      await s.call("check-slug taken", ann.actor, (c) => c.organization.checkSlug({ slug }));
      await s.call("check-slug free", ann.actor, (c) => c.organization.checkSlug({ slug: s.username("free") }));
      await s.call("get-full-organization", ann.actor, (c) => c.organization.getFullOrganization());
      await s.call("update", ann.actor, (c) => c.organization.update({ data: { name: "Acme Inc", metadata: { plan: "pro" } } }));
      await s.call("list", ann.actor, (c) => c.organization.list());
      await s.call("set-active null", ann.actor, (c) => c.organization.setActive({ organizationId: null }));
      await s.call("get-full-organization with none active", ann.actor, (c) => c.organization.getFullOrganization());
      await s.call("set-active by slug", ann.actor, (c) => c.organization.setActive({ organizationSlug: slug }));
      const bob = await signUp(s, "bob");
      await s.call("a stranger sets it active", bob.actor, (c) => c.organization.setActive({ organizationId: orgId }));
      await s.call("a stranger deletes it", bob.actor, (c) => c.organization.delete({ organizationId: orgId }));
      await s.call("delete", ann.actor, (c) => c.organization.delete({ organizationId: orgId }));
      await s.call("get-session after delete", ann.actor, (c) => c.getSession());
    },
  },
  {
    name: "organization: invitations accepted, rejected, cancelled; members listed, sorted, filtered; roles; remove; leave",
    async run(s) {
      const ann = await verifiedUser(s, "ann");
      const orgId = await orgOf(s, ann, s.username("inv"));
      const bob = await verifiedUser(s, "bob");
      const cat = await verifiedUser(s, "cat");
      const dan = await verifiedUser(s, "dan");
      const invB = await s.call("invite bob as admin", ann.actor, (c) => c.organization.inviteMember({ email: bob.email, role: "admin" }));
      const link = await s.mail("bob's invitation mail", bob.email);
      const invitationId = s.need(new URL(link).searchParams.get("invitationId"), "the mailed invitation id");
      await s.call("invite bob again", ann.actor, (c) => c.organization.inviteMember({ email: bob.email, role: "member" }));
      await s.call("list-invitations", ann.actor, (c) => c.organization.listInvitations());
      await s.call("get-invitation by bob", bob.actor, (c) => c.organization.getInvitation({ query: { id: invitationId } }));
      await s.call("get-invitation by cat", cat.actor, (c) => c.organization.getInvitation({ query: { id: invitationId } }));
      await s.call("list-user-invitations by bob", bob.actor, (c) => c.organization.listUserInvitations());
      await s.call("accept by cat", cat.actor, (c) => c.organization.acceptInvitation({ invitationId }));
      await s.call("accept by bob", bob.actor, (c) => c.organization.acceptInvitation({ invitationId: s.need(invB?.id, "bob's invitation") }));
      await s.call("accept again", bob.actor, (c) => c.organization.acceptInvitation({ invitationId }));
      const invC = await s.call("invite cat", ann.actor, (c) => c.organization.inviteMember({ email: cat.email, role: "member" }));
      await s.call("reject by cat", cat.actor, (c) => c.organization.rejectInvitation({ invitationId: s.need(invC?.id, "cat's invitation") }));
      const invD = await s.call("invite dan", ann.actor, (c) => c.organization.inviteMember({ email: dan.email, role: "member" }));
      await s.call("cancel dan's", ann.actor, (c) => c.organization.cancelInvitation({ invitationId: s.need(invD?.id, "dan's invitation") }));
      await s.call("accept cancelled by dan", dan.actor, (c) => c.organization.acceptInvitation({ invitationId: invD!.id }));
      const invD2 = await s.call("invite dan again", bob.actor, (c) => c.organization.inviteMember({ email: dan.email, role: "member", organizationId: orgId }));
      await s.call("accept by dan", dan.actor, (c) => c.organization.acceptInvitation({ invitationId: s.need(invD2?.id, "dan's second invitation") }));

      await s.call("list-members", ann.actor, (c) => c.organization.listMembers({ query: { sortBy: "createdAt", sortDirection: "asc" } }));
      await s.call("list-members page", ann.actor, (c) => c.organization.listMembers({ query: { limit: 1, offset: 1, sortBy: "createdAt" } }));
      await s.call("list-members filtered", ann.actor, (c) => c.organization.listMembers({ query: { filterField: "role", filterOperator: "eq", filterValue: "admin" } }));
      await s.call("get-active-member", ann.actor, (c) => c.organization.getActiveMember());
      await s.call("get-active-member-role", bob.actor, (c) => c.organization.getActiveMemberRole());
      await s.call("has-permission owner", ann.actor, (c) => c.organization.hasPermission({ permissions: { organization: ["delete"] } }));
      await s.call("has-permission admin", bob.actor, (c) => c.organization.hasPermission({ permissions: { organization: ["delete"] } }));
      const danMember = await s.call("dan's membership", dan.actor, (c) => c.organization.getActiveMember());
      await s.call("admin makes dan an admin", bob.actor, (c) => c.organization.updateMemberRole({ memberId: s.need(danMember?.id, "dan's member id"), role: "admin" }));
      await s.call("dan promotes himself to owner", dan.actor, (c) => c.organization.updateMemberRole({ memberId: danMember!.id, role: "owner" }));
      await s.call("unknown role", ann.actor, (c) => c.organization.updateMemberRole({ memberId: danMember!.id, role: "emperor" as "admin" }));
      await s.call("the only owner leaves", ann.actor, (c) => c.organization.leave({ organizationId: orgId }));
      await s.call("bob removes the owner", bob.actor, (c) => c.organization.removeMember({ memberIdOrEmail: ann.email }));
      await s.call("bob removes dan", bob.actor, (c) => c.organization.removeMember({ memberIdOrEmail: dan.email }));
      await s.call("dan leaves after removal", dan.actor, (c) => c.organization.leave({ organizationId: orgId }));
      await s.call("bob leaves", bob.actor, (c) => c.organization.leave({ organizationId: orgId }));
      await s.call("list-members after", ann.actor, (c) => c.organization.listMembers());
    },
  },
  {
    // Both targets run with `membershipLimit: 3` (targets): the owner and two members fill it.
    name: "organization: the membership limit on accept-invitation and add-member",
    async run(s) {
      const ann = await verifiedUser(s, "ann");
      const orgId = await orgOf(s, ann, s.username("full"));
      const invited: Record<string, { person: Person; invitationId: string }> = {};
      for (const name of ["bob", "cat", "dan"]) {
        const person = await verifiedUser(s, name);
        const inv = await s.call(`invite ${name}`, ann.actor, (c) => c.organization.inviteMember({ email: person.email, role: "member" }));
        invited[name] = { person, invitationId: s.need(inv?.id, `${name}'s invitation`) };
      }
      const accept = (name: string, step: string) => s.call(step, invited[name]!.person.actor, (c) => c.organization.acceptInvitation({ invitationId: invited[name]!.invitationId }));
      await accept("bob", "accept by bob (two members)");
      await accept("cat", "accept by cat (three: the limit)");
      await accept("dan", "accept by dan past the limit");
      const dan = invited.dan!.person;
      await s.call("dan's invitation is still pending", dan.actor, (c) => c.organization.getInvitation({ query: { id: invited.dan!.invitationId } }));
      const root = await admin(s);
      await s.call("an admin adds dan past the limit", root.actor, (c) => c.$fetch("/organization/add-member", { method: "POST", body: { userId: dan.id, organizationId: orgId, role: "member" } }));
      await s.call("list-members at the limit", ann.actor, (c) => c.organization.listMembers({ query: { sortBy: "createdAt", sortDirection: "asc" } }));
      await s.call("ann removes cat", ann.actor, (c) => c.organization.removeMember({ memberIdOrEmail: invited.cat!.person.email }));
      await accept("dan", "accept by dan once a seat is free");
      await s.call("list-members full again", ann.actor, (c) => c.organization.listMembers({ query: { sortBy: "createdAt", sortDirection: "asc" } }));
    },
  },
  {
    name: "organization: teams",
    async run(s) {
      const ann = await signUp(s, "ann");
      const orgId = await orgOf(s, ann, s.username("teams"));
      await s.call("list-teams (the default team)", ann.actor, (c) => c.organization.listTeams());
      const team = await s.call("create-team", ann.actor, (c) => c.organization.createTeam({ name: "Engineering" }));
      const teamId = s.need(team?.id, "the team's id");
      await s.call("update-team", ann.actor, (c) => c.organization.updateTeam({ teamId, data: { name: "Eng" } }));
      await s.call("add-team-member (ann)", ann.actor, (c) => c.organization.addTeamMember({ teamId, userId: ann.id }));
      await s.call("list-team-members", ann.actor, (c) => c.organization.listTeamMembers({ query: { teamId } }));
      await s.call("set-active-team", ann.actor, (c) => c.organization.setActiveTeam({ teamId }));
      await s.call("get-session shows the team", ann.actor, (c) => c.getSession());
      await s.call("list-user-teams", ann.actor, (c) => c.organization.listUserTeams());
      await s.call("remove the session's active team", ann.actor, (c) => c.organization.removeTeam({ teamId, organizationId: orgId }));
      await s.call("remove-team-member", ann.actor, (c) => c.organization.removeTeamMember({ teamId, userId: ann.id }));
      await s.call("get-session after leaving the team", ann.actor, (c) => c.getSession());
      await s.call("set-active-team null", ann.actor, (c) => c.organization.setActiveTeam({ teamId: null }));
      await s.call("remove-team", ann.actor, (c) => c.organization.removeTeam({ teamId, organizationId: orgId }));
      await s.call("list-teams after", ann.actor, (c) => c.organization.listTeams());
    },
  },
];
