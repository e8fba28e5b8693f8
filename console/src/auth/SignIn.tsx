import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useAction } from "../ui/hooks.ts";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { TwoFactorForm } from "./TwoFactorForm.tsx";

/** Email and password; when the account has two-factor on, the second step follows on the same page. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [methods, setMethods] = useState<string[] | null>(null);
  const action = useAction();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await action.run(() => api.signIn.email.mutate({ email, password }));
    if (!result) return;
    if ("twoFactorRedirect" in result) setMethods(result.twoFactorMethods);
    else onSignedIn();
  }

  if (methods) return <TwoFactorForm methods={methods} onVerified={onSignedIn} onCancel={() => setMethods(null)} />;
  return (
    <main className="narrow" id="main">
      <h1>Portcullis admin</h1>
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <button type="submit" className="primary" disabled={action.busy}>
          {action.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <ProblemBox problem={action.problem} title="Sign-in failed" />
    </main>
  );
}
