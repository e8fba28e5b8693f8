import { api } from "./api.ts";
import { AuditLog } from "./audit/AuditLog.tsx";
import { Dashboard } from "./dashboard/Dashboard.tsx";
import { NoAccess } from "./auth/NoAccess.tsx";
import { Allowed, useSession } from "./auth/session.tsx";
import { useLocation } from "./route.ts";
import { useAction } from "./ui/hooks.ts";
import { Link } from "./ui/Link.tsx";
import { PageTitle } from "./ui/PageTitle.tsx";
import { ProblemBox } from "./ui/ProblemBox.tsx";
import { ClientDetail } from "./clients/ClientDetail.tsx";
import { ClientList } from "./clients/ClientList.tsx";
import { OrganizationDetail, OrganizationList } from "./organizations/Organizations.tsx";
import { CreateUser } from "./users/CreateUser.tsx";
import { UserDetail } from "./users/UserDetail.tsx";
import { UserList } from "./users/UserList.tsx";

/** Header, navigation (only what the admin's roles grant) and the page for the current path. */
export function Shell() {
  const { me, can, refresh } = useSession();
  const location = useLocation();
  const signOut = useAction();

  async function leave() {
    if ((await signOut.run(() => api.signOut.mutate())) !== undefined) refresh();
  }

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Portcullis admin</span>
        <nav aria-label="Console">
          <ul>
            <Allowed to="audit:list">
              <li>
                <Link to="/">Dashboard</Link>
              </li>
            </Allowed>
            <Allowed to="user:list">
              <li>
                <Link to="/users">Users</Link>
              </li>
            </Allowed>
            <Allowed to="user:create">
              <li>
                <Link to="/users/new">Create user</Link>
              </li>
            </Allowed>
            <Allowed to="user:list">
              <li>
                <Link to="/organizations">Organizations</Link>
              </li>
            </Allowed>
            <Allowed to="oauthClient:list">
              <li>
                <Link to="/clients">OAuth clients</Link>
              </li>
            </Allowed>
            <Allowed to="audit:list">
              <li>
                <Link to="/audit">Audit log</Link>
              </li>
            </Allowed>
          </ul>
        </nav>
        <span className="who">
          Signed in as <strong>{me.user.email}</strong> (role: {me.user.role})
        </span>
        <button type="button" onClick={leave} disabled={signOut.busy}>
          Sign out
        </button>
      </header>
      <ProblemBox problem={signOut.problem} />
      <main id="main">{page(location.path, can)}</main>
    </>
  );
}

function page(path: string, can: ReturnType<typeof useSession>["can"]) {
  if (path === "/" || path === "") {
    // The dashboard first (drawn from the audit log), for whoever may read it.
    if (can("audit:list")) return <Dashboard />;
    if (can("user:list")) return <UserList />;
    if (can("audit:list")) return <AuditLog />;
    return <NoAccess />;
  }
  if (path === "/users" || path === "/users/") return <UserList />;
  if (path === "/users/new") return <CreateUser />;
  const user = /^\/users\/([^/]+)$/.exec(path);
  if (user) return <UserDetail key={user[1]} id={decodeURIComponent(user[1]!)} />;
  if (path === "/audit" || path === "/audit/") return <AuditLog />;
  if (path === "/organizations" || path === "/organizations/") return <OrganizationList />;
  const org = /^\/organizations\/([^/]+)$/.exec(path);
  if (org) return <OrganizationDetail key={org[1]} id={decodeURIComponent(org[1]!)} />;
  if (path === "/clients" || path === "/clients/") return <ClientList />;
  const client = /^\/clients\/([^/]+)$/.exec(path);
  if (client) return <ClientDetail key={client[1]} id={decodeURIComponent(client[1]!)} />;
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        Nothing here. <Link to="/">Back to the start</Link>.
      </p>
    </>
  );
}
