import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent, Invitation, Member } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { HOUR } from "../../harness/clock.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

/** Invitations over real HTTP and real SMTP (docs/organizations.md "Invitations"). */
let sink: SmtpSink;
let server: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, organization: { membershipLimit: 3, invitationLimit: 4 } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const op = (path: string, body: unknown, u: SignedInUser) => post(`${server.auth}/organization/${path}`, body, { bearer: u.token });
const q = (path: string, query: Record<string, string>, u: SignedInUser) => get(`${server.auth}/organization/${path}?${new URLSearchParams(query)}`, { bearer: u.token });
let n = 0;

async function verifiedUser(): Promise<SignedInUser> {
  const u = await signUp(server);
  expect((await adminPost(server, "update-user", { userId: u.id, data: { emailVerified: true } }, admin.token)).status).toBe(200);
  return u;
}

async function orgWithOwner() {
  const owner = await verifiedUser();
  const res = await op("create", { name: `Invite Co ${n}`, slug: `inv-${Date.now().toString(36)}-${n++}` }, owner);
  expect(res.status, res.text).toBe(200);
  return { owner, org: res.body as { id: string; name: string } };
}

async function invite(owner: SignedInUser, orgId: string, email: string, role = "member") {
  const res = await op("invite-member", { email, role, organizationId: orgId }, owner);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; status: string };
}

describe("invitations", () => {
  it("invite mails the app's accept link with the invitation id; the verified recipient sees, then accepts it; the organization becomes active", async () => {
    const { owner, org } = await orgWithOwner();
    const guest = await verifiedUser();
    const inv = await invite(owner, org.id, guest.email, "admin");
    expect(inv).toMatchObject({ status: "pending", email: guest.email, role: "admin", organizationId: org.id, inviterId: owner.id });
    expect(Buffer.from(inv.id, "base64url").length).toBeGreaterThanOrEqual(16);
    const mail = await sink.waitFor((m) => m.to.includes(guest.email));
    expect(mail.subject).toBe(`You are invited to join ${org.name}`);
    const link = new URL(linkFrom(mail, "/accept-invitation"));
    expect(`${link.origin}${link.pathname}`).toBe("http://127.0.0.1:3000/accept-invitation");
    expect(link.searchParams.get("invitationId")).toBe(inv.id);
    expect((await q("list-invitations", { organizationId: org.id }, owner)).body.map((i: { id: string }) => i.id)).toEqual([inv.id]);

    const seen = await q("get-invitation", { id: inv.id }, guest);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toMatchObject({ id: inv.id, organizationName: org.name, inviterEmail: owner.email });
    expect((await get(`${server.auth}/organization/list-user-invitations`, { bearer: guest.token })).body.map((i: { id: string }) => i.id)).toEqual([inv.id]);
    const accepted = await op("accept-invitation", { invitationId: inv.id }, guest);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ invitation: { id: inv.id, status: "accepted" }, member: { userId: guest.id, role: "admin", organizationId: org.id } });
    expect((await get(`${server.auth}/get-session`, { bearer: guest.token })).body.session.activeOrganizationId).toBe(org.id);
    // Single use.
    expectError(await op("accept-invitation", { invitationId: inv.id }, guest), 400, "INVITATION_NOT_FOUND");
    expectError(await op("invite-member", { email: guest.email, role: "member", organizationId: org.id }, owner), 400, "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION");
    const audit = await server.portcullis.app.orm.em.fork().find(AuditEvent, { targetId: org.id, action: { $like: "organization-%invit%" } });
    expect(audit.map((a) => a.action).sort()).toEqual(["organization-accept-invitation", "organization-invite-member"]);
  });

  it("attack: only the signed-in owner of the VERIFIED invited address can see, accept or reject it", async () => {
    const { owner, org } = await orgWithOwner();
    const unverified = await signUp(server);
    const inv = await invite(owner, org.id, unverified.email);
    const stranger = await verifiedUser();
    for (const u of [stranger, unverified]) {
      expectError(await q("get-invitation", { id: inv.id }, u), 403, "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION");
      expectError(await op("accept-invitation", { invitationId: inv.id }, u), 403, "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION");
      expectError(await op("reject-invitation", { invitationId: inv.id }, u), 403, "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION");
    }
    expectError(await get(`${server.auth}/organization/list-user-invitations`, { bearer: unverified.token }), 403, "EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION");
    expect(await server.portcullis.app.orm.em.fork().count(Member, { organization: org.id })).toBe(1);
    // An impersonating admin cannot make the user join.
    const imp = await adminPost(server, "impersonate-user", { userId: stranger.id }, admin.token);
    expectError(await post(`${server.auth}/organization/accept-invitation`, { invitationId: inv.id }, { bearer: imp.body.session.token }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await q("get-invitation", { id: "no-such-invitation" }, stranger), 400, "INVITATION_NOT_FOUND");
  });

  it("reject and cancel spend it; an expired one no longer works; resend extends a pending one", async () => {
    const { owner, org } = await orgWithOwner();
    const a = await verifiedUser();
    const b = await verifiedUser();
    const c = await verifiedUser();
    const ia = await invite(owner, org.id, a.email);
    const ib = await invite(owner, org.id, b.email);
    const ic = await invite(owner, org.id, c.email);
    const rejected = await op("reject-invitation", { invitationId: ia.id }, a);
    expect(rejected.body).toMatchObject({ invitation: { status: "rejected" }, member: null });
    expectError(await op("accept-invitation", { invitationId: ia.id }, a), 400, "INVITATION_NOT_FOUND");
    expect((await op("cancel-invitation", { invitationId: ib.id }, owner)).body.status).toBe("canceled");
    expectError(await op("accept-invitation", { invitationId: ib.id }, b), 400, "INVITATION_NOT_FOUND");
    expectError(await op("invite-member", { email: c.email, role: "member", organizationId: org.id }, owner), 400, "USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION");
    server.clock.advance(47 * HOUR);
    const resent = await op("invite-member", { email: c.email, role: "member", organizationId: org.id, resend: true }, owner);
    expect(resent.body.id).toBe(ic.id);
    server.clock.advance(2 * HOUR);
    expect((await op("accept-invitation", { invitationId: ic.id }, c)).status).toBe(200);
    const d = await verifiedUser();
    const id = await invite(owner, org.id, d.email);
    server.clock.advance(49 * HOUR);
    expectError(await op("accept-invitation", { invitationId: id.id }, d), 400, "INVITATION_EXPIRED");
  });

  it("attack: members cannot invite; admins cannot invite owners; the invitation limit holds", async () => {
    const { owner, org } = await orgWithOwner();
    const member = await verifiedUser();
    const orgAdmin = await verifiedUser();
    expect((await post(`${server.auth}/organization/add-member`, { userId: member.id, organizationId: org.id, role: "member" }, { bearer: admin.token })).status).toBe(200);
    expect((await post(`${server.auth}/organization/add-member`, { userId: orgAdmin.id, organizationId: org.id, role: "admin" }, { bearer: admin.token })).status).toBe(200);
    expectError(await op("invite-member", { email: "x@example.test", role: "member", organizationId: org.id }, member), 403, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");
    expectError(await op("invite-member", { email: "x@example.test", role: "owner", organizationId: org.id }, orgAdmin), 403, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE");
    expectError(await op("invite-member", { email: "x@example.test", role: "emperor", organizationId: org.id }, owner), 400, "ROLE_NOT_FOUND");
    const pending = await Promise.all([1, 2, 3, 4, 5].map((i) => op("invite-member", { email: `limit-${n}-${i}@example.test`, role: "member", organizationId: org.id }, owner)));
    expect(pending.filter((r) => r.status === 200)).toHaveLength(4);
    expect(pending.filter((r) => r.status === 403).every((r) => r.body.code === "INVITATION_LIMIT_REACHED")).toBe(true);
    expect(await server.portcullis.app.orm.em.fork().count(Invitation, { organization: org.id, status: "pending" })).toBe(4);
  });

  it("race: two concurrent accepts on the last seat, one wins, the other 403 ORGANIZATION_MEMBERSHIP_LIMIT_REACHED; one invitation accepted twice at once joins once", async () => {
    const { owner, org } = await orgWithOwner();
    expect((await post(`${server.auth}/organization/add-member`, { userId: (await signUp(server)).id, organizationId: org.id, role: "member" }, { bearer: admin.token })).status).toBe(200);
    const [x, y] = [await verifiedUser(), await verifiedUser()];
    const [ix, iy] = [await invite(owner, org.id, x.email), await invite(owner, org.id, y.email)];
    const [rx, ry] = await Promise.all([op("accept-invitation", { invitationId: ix.id }, x), op("accept-invitation", { invitationId: iy.id }, y)]);
    expect([rx.status, ry.status].sort()).toEqual([200, 403]);
    expect([rx, ry].find((r) => r.status === 403)!.body.code).toBe("ORGANIZATION_MEMBERSHIP_LIMIT_REACHED");
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Member, { organization: org.id })).toBe(3);
    // The loser's invitation stays pending (its transaction rolled back).
    expect(await em.count(Invitation, { organization: org.id, status: "pending" })).toBe(1);

    const other = await orgWithOwner();
    const z = await verifiedUser();
    const iz = await invite(other.owner, other.org.id, z.email);
    const twice = await Promise.all([op("accept-invitation", { invitationId: iz.id }, z), op("accept-invitation", { invitationId: iz.id }, z)]);
    expect(twice.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await em.count(Member, { organization: other.org.id, user: z.id })).toBe(1);
  });
});
