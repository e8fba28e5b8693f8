import { api, type AdminOrganization, type AdminOrganizationPage, type UserOrganization } from "../api.ts";
import { navigate, queryString, useLocation } from "../route.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { Pager } from "../ui/Pager.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";

/** The organizations page (docs/organizations.md): every organization, newest first, with its member count. */
export function OrganizationList() {
  const { query } = useLocation();
  const offset = Number(query.get("offset") ?? 0) || 0;
  const limit = 50;
  const page = useLoad(() => api.admin.listOrganizations.query({ limit, offset }), [offset]);
  const columns: Column<AdminOrganizationPage["organizations"][number]>[] = [
    { header: "Name", cell: (o) => <Link to={`/organizations/${encodeURIComponent(o.id)}`}>{o.name}</Link> },
    { header: "Slug", cell: (o) => o.slug },
    { header: "Members", cell: (o) => String(o.memberCount) },
    { header: "Created", cell: (o) => formatDate(o.createdAt) },
  ];
  return (
    <>
      <PageTitle text="Organizations">Organizations</PageTitle>
      <ProblemBox problem={page.problem} />
      {page.data && (
        <>
          <DataTable caption={`${page.data.total} organizations, newest first`} columns={columns} rows={page.data.organizations} rowKey={(o) => o.id} empty="No organizations yet." />
          <Pager label="Organizations" offset={offset} limit={limit} total={page.data.total} onOffset={(o) => navigate(`/organizations${queryString({ offset: o || undefined })}`)} />
        </>
      )}
    </>
  );
}

/** One organization: its members (the first 100) and its pending invitations. */
export function OrganizationDetail({ id }: { id: string }) {
  const org = useLoad(() => api.admin.getOrganization.query({ organizationId: id }), [id]);
  const o: AdminOrganization | undefined = org.data;
  const members: Column<AdminOrganization["members"][number]>[] = [
    { header: "Member", cell: (m) => <Link to={`/users/${encodeURIComponent(m.userId)}`}>{m.user?.email ?? m.userId}</Link> },
    { header: "Role", cell: (m) => m.role },
    { header: "Since", cell: (m) => formatDate(m.createdAt) },
  ];
  const invitations: Column<AdminOrganization["invitations"][number]>[] = [
    { header: "Address", cell: (i) => i.email },
    { header: "Role", cell: (i) => i.role },
    { header: "Expires", cell: (i) => formatDate(i.expiresAt) },
  ];
  return (
    <>
      <p className="crumbs">
        <Link to="/organizations">Organizations</Link> / {o?.name ?? id}
      </p>
      <PageTitle text={o?.name ?? "Organization"}>{o ? o.name : org.loading ? "Loading organization…" : "Organization"}</PageTitle>
      <ProblemBox problem={org.problem} />
      {o && (
        <>
          <p>
            Slug <code>{o.slug}</code>, created {formatDate(o.createdAt)}, {o.memberCount} members.
          </p>
          <section aria-labelledby="org-members-title">
            <h2 id="org-members-title">Members</h2>
            <DataTable caption="Members, oldest first (the first 100)" columns={members} rows={o.members} rowKey={(m) => m.id} empty="No members." />
          </section>
          <section aria-labelledby="org-invitations-title">
            <h2 id="org-invitations-title">Pending invitations</h2>
            <DataTable caption="Pending invitations" columns={invitations} rows={o.invitations} rowKey={(i) => i.id} empty="No pending invitations." />
          </section>
        </>
      )}
    </>
  );
}

/** The user page's panel: the organizations the user belongs to, with the role in each. */
export function UserOrganizationsPanel({ userId, version }: { userId: string; version: number }) {
  const orgs = useLoad(() => api.admin.listUserOrganizations.query({ userId }), [userId, version]);
  const columns: Column<UserOrganization>[] = [
    { header: "Organization", cell: (o) => <Link to={`/organizations/${encodeURIComponent(o.id)}`}>{o.name}</Link> },
    { header: "Slug", cell: (o) => o.slug },
    { header: "Role", cell: (o) => o.role },
  ];
  return (
    <section aria-labelledby="user-orgs-title">
      <h2 id="user-orgs-title">Organizations</h2>
      <ProblemBox problem={orgs.problem} />
      {orgs.data && <DataTable caption="Organizations of this user" columns={columns} rows={orgs.data} rowKey={(o) => o.id} empty="Not a member of any organization." />}
    </section>
  );
}
