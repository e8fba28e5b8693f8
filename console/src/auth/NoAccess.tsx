import { api } from "../api.ts";
import { useLoad } from "../ui/hooks.ts";
import { PageTitle } from "../ui/PageTitle.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { useSession } from "./session.tsx";

/**
 * A signed-in account whose roles grant no admin action. The console still asks the server for the
 * user list, so what the admin reads is the server's own refusal, not the console's guess.
 */
export function NoAccess() {
  const { me } = useSession();
  const probe = useLoad(() => api.admin.listUsers.query({ limit: 1 }), []);
  return (
    <>
      <PageTitle>No admin access</PageTitle>
      <p>
        You are signed in as <strong>{me.user.email}</strong> with the role <strong>{me.user.role}</strong>, which grants no
        admin action in this console.
      </p>
      {probe.loading && <p role="status">Asking the server…</p>}
      <ProblemBox problem={probe.problem} />
      {probe.data && <p>The server allowed listing users after all: reload the page.</p>}
    </>
  );
}
