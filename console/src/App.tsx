import { useCallback, useEffect, useState } from "react";
import { api, describeError, type Problem, type SessionWithUser } from "./api.ts";
import { Impersonating } from "./auth/Impersonating.tsx";
import { loadPermissions, type Permission } from "./auth/permissions.ts";
import { SessionProvider } from "./auth/session.tsx";
import { SignIn } from "./auth/SignIn.tsx";
import { Shell } from "./Shell.tsx";
import { ProblemBox } from "./ui/ProblemBox.tsx";

type State =
  | { kind: "loading" }
  | { kind: "signed-out" }
  | { kind: "unreachable"; problem: Problem }
  | { kind: "impersonating"; me: SessionWithUser }
  | { kind: "signed-in"; me: SessionWithUser; granted: ReadonlySet<Permission> };

/** Who is signed in (get-session), and what their roles grant (has-permission), decide the screen. */
export function App() {
  const [state, setState] = useState<State>({ kind: "loading" });
  const [tick, setTick] = useState(0);
  const refresh = useCallback(() => setTick((t) => t + 1), []);

  useEffect(() => {
    let live = true;
    (async () => {
      const me = await api.getSession.query();
      if (!me) return { kind: "signed-out" } as const;
      // An impersonation session acts as the user: the console only offers to end it.
      if (me.session.impersonatedBy) return { kind: "impersonating", me } as const;
      return { kind: "signed-in", me, granted: await loadPermissions() } as const;
    })().then(
      (next) => live && setState(next),
      (err: unknown) => live && setState({ kind: "unreachable", problem: describeError(err) }),
    );
    return () => {
      live = false;
    };
  }, [tick]);

  switch (state.kind) {
    case "loading":
      return (
        <main className="narrow" id="main">
          <p role="status">Loading…</p>
        </main>
      );
    case "signed-out":
      return <SignIn onSignedIn={refresh} />;
    case "unreachable":
      return (
        <main className="narrow" id="main">
          <h1>Portcullis admin</h1>
          <ProblemBox problem={state.problem} title="Could not read the session" />
          <button type="button" onClick={refresh}>
            Try again
          </button>
        </main>
      );
    case "impersonating":
      return <Impersonating me={state.me} onStopped={refresh} />;
    case "signed-in": {
      const { me, granted } = state;
      return (
        <SessionProvider value={{ me, can: (p) => granted.has(p), refresh }}>
          <Shell />
        </SessionProvider>
      );
    }
  }
}
