import { api } from "../api.ts";
import { navigate, queryString, useLocation } from "../route.ts";
import { Allowed } from "../auth/session.tsx";
import { matches } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { Pager } from "../ui/Pager.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { readState, toInput, writeState, type ListState } from "./listQuery.ts";
import { UserQueryForm } from "./UserQueryForm.tsx";
import { UserTable } from "./UserTable.tsx";

/** list-users: search, one filter, sort and offset paging, as the API gives them (fast at 1M users). */
export function UserList() {
  const { query } = useLocation();
  const key = query.toString();
  const state = readState(query);
  const list = useLoad(() => api.admin.listUsers.query(toInput(state)), [key]);
  const show = (next: ListState) => navigate(`/users${queryString(writeState(next))}`);

  return (
    <>
      <PageTitle>Users</PageTitle>
      <Allowed to="user:create">
        <p>
          <Link to="/users/new">Create a user</Link>
        </p>
      </Allowed>
      <UserQueryForm valueKey={key} value={state} onApply={show} />
      <ProblemBox problem={list.problem} />
      <p role="status" className="count">
        {list.loading ? "Loading users…" : list.data ? matches(list.data.total, "user") : ""}
      </p>
      {list.data && (
        <>
          <UserTable users={list.data.users} caption="Users" />
          <Pager label="Users" total={list.data.total} limit={state.limit} offset={state.offset} onOffset={(offset) => show({ ...state, offset })} />
        </>
      )}
    </>
  );
}
