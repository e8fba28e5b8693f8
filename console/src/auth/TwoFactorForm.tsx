import { useEffect, useRef, useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useAction } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";

type Method = "totp" | "otp" | "backup";

const METHODS: Record<Method, string> = { totp: "Authenticator app", otp: "Email", backup: "Backup code" };
const LABELS: Record<Method, string> = {
  totp: "Code from your authenticator app",
  otp: "Code sent by email",
  backup: "Backup code",
};

/** The second step of a sign-in (better-auth's two-factor plugin): the pending cookie carries the first. */
export function TwoFactorForm({ methods, onVerified, onCancel }: { methods: string[]; onVerified: () => void; onCancel: () => void }) {
  const offered: Method[] = [...(methods.includes("totp") ? (["totp", "backup"] as const) : []), ...(methods.includes("otp") ? (["otp"] as const) : [])];
  const [method, setMethod] = useState<Method>(offered[0] ?? "otp");
  const [code, setCode] = useState("");
  const action = useAction();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const verify =
      method === "totp" ? api.twoFactor.verifyTotp : method === "otp" ? api.twoFactor.verifyOtp : api.twoFactor.verifyBackupCode;
    const result = await action.run(() => verify.mutate({ code: code.trim() }));
    if (result) onVerified();
  }

  async function sendOtp() {
    await action.run(() => api.twoFactor.sendOtp.mutate(), "A code is on its way to your email address.");
  }

  return (
    <main className="narrow" id="main">
      <h1>Portcullis admin</h1>
      <form onSubmit={submit} aria-labelledby="two-factor-title">
        <h2 id="two-factor-title" tabIndex={-1} ref={heading}>
          Two-factor verification
        </h2>
        <p>Your account has two-factor authentication on. Enter a code to finish signing in.</p>
        {offered.length > 1 && (
          <fieldset>
            <legend>Verify with</legend>
            {offered.map((m) => (
              <label key={m} className="inline">
                <input type="radio" name="method" value={m} checked={method === m} onChange={() => setMethod(m)} /> {METHODS[m]}
              </label>
            ))}
          </fieldset>
        )}
        {method === "otp" && (
          <button type="button" onClick={sendOtp} disabled={action.busy}>
            Email me a code
          </button>
        )}
        <label htmlFor="code">{LABELS[method]}</label>
        <input
          id="code"
          inputMode={method === "backup" ? "text" : "numeric"}
          autoComplete="one-time-code"
          required
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
        <button type="submit" className="primary" disabled={action.busy}>
          Verify
        </button>
        <button type="button" onClick={onCancel}>
          Back
        </button>
      </form>
      <Notice text={action.notice} />
      <ProblemBox problem={action.problem} title="Verification failed" />
    </main>
  );
}
