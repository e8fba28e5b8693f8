import { useState } from "react";
import { api, type User } from "../api.ts";
import { UserAudit } from "../audit/UserAudit.tsx";
import { Allowed } from "../auth/session.tsx";
import { formatDate } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { ApiKeysPanel } from "./ApiKeysPanel.tsx";
import { UserOrganizationsPanel } from "../organizations/Organizations.tsx";
import { AccountsPanel, DeviceCodesPanel } from "./RecordsPanels.tsx";
import { SessionsPanel } from "./SessionsPanel.tsx";
import { UserActions } from "./UserActions.tsx";
import { banState } from "./UserTable.tsx";

/** One user: profile, the actions the admin's roles grant, sessions, accounts, device codes, API keys, audit trail. */
export function UserDetail({ id }: { id: string }) {
  // Bumped by every change, so each panel reads the server's state again.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  const user = useLoad(() => api.admin.getUser.query({ id }), [id, version]);

  if (!user.data) {
    return (
      <>
        <PageTitle text="User">{user.loading ? "Loading user…" : "User"}</PageTitle>
        <ProblemBox problem={user.problem} />
        <p>
          <Link to="/users">Back to users</Link>
        </p>
      </>
    );
  }
  const u = user.data;
  return (
    <>
      <p className="crumbs">
        <Link to="/users">Users</Link> / {u.email}
      </p>
      <PageTitle text={u.email}>{u.email}</PageTitle>
      <ProblemBox problem={user.problem} />
      <Profile user={u} />
      <UserActions user={u} onChanged={changed} />
      <Allowed to="session:list">
        <SessionsPanel userId={u.id} version={version} onChanged={changed} />
      </Allowed>
      <Allowed to="user:get">
        <AccountsPanel userId={u.id} version={version} />
        <DeviceCodesPanel userId={u.id} version={version} />
        <UserOrganizationsPanel userId={u.id} version={version} />
      </Allowed>
      <Allowed to="apiKey:list">
        <ApiKeysPanel userId={u.id} version={version} onChanged={changed} />
      </Allowed>
      <Allowed to="audit:list">
        <UserAudit userId={u.id} version={version} />
      </Allowed>
    </>
  );
}

function Profile({ user: u }: { user: User }) {
  return (
    <section aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <code>{u.id}</code>
        </dd>
        <dt>Name</dt>
        <dd>{u.name || "—"}</dd>
        <dt>Username</dt>
        <dd>{u.displayUsername ?? u.username ?? "—"}</dd>
        <dt>Role</dt>
        <dd>{u.role}</dd>
        <dt>Status</dt>
        <dd>
          <span className={u.banned ? "tag tag-bad" : "tag"}>{banState(u)}</span>
          {u.banned && <> — reason: {u.banReason ?? "none given"}</>}
        </dd>
        <dt>Email verified</dt>
        <dd>{u.emailVerified ? "Yes" : "No"}</dd>
        <dt>Two-factor</dt>
        <dd>{u.twoFactorEnabled ? "On" : "Off"}</dd>
        <dt>Created</dt>
        <dd>{formatDate(u.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(u.updatedAt)}</dd>
      </dl>
    </section>
  );
}
