import type { Problem } from "../api.ts";

/** A server error in words: its message, its code and status, and the fields it names. */
export function ProblemBox({ problem, title = "The server refused" }: { problem: Problem | null; title?: string }) {
  if (!problem) return null;
  return (
    <div className="problem" role="alert">
      <p>
        <strong>{title}:</strong> {problem.message}
        {problem.code && (
          <>
            {" "}
            (<code>{problem.code}</code>
            {problem.status ? `, HTTP ${problem.status}` : ""})
          </>
        )}
      </p>
      {problem.issues.length > 0 && (
        <ul>
          {problem.issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              {i.path ? <code>{i.path}</code> : null} {i.message}
            </li>
          ))}
        </ul>
      )}
      {problem.requestId && <p>Request id for the server log: <code>{problem.requestId}</code></p>}
    </div>
  );
}

/** A success note, announced politely. */
export function Notice({ text }: { text: string | null }) {
  return (
    <p className="notice" role="status">
      {text ?? ""}
    </p>
  );
}
