import { UniqueConstraintViolationException } from "./mikro-orm.ts";
import { AuthError } from "../errors.ts";

/**
 * Which users column a unique violation is about. Not a substring of the whole message: it
 * carries the INSERT's column list (always "username") and the user's own values. PostgreSQL
 * names the constraint; SQLite ends the message with "UNIQUE constraint failed: users.<column>".
 */
function violatedUsersColumn(err: Error): "email" | "username" | null {
  const constraint = (err as { constraint?: unknown }).constraint;
  if (constraint === "users_username_unique") return "username";
  if (constraint === "users_email_unique") return "email";
  const sqlite = /UNIQUE constraint failed: users\.(email|username)$/.exec(`${err.message}`);
  return sqlite ? (sqlite[1] as "email" | "username") : null;
}

/** The drivers' own unique violation, from statements the session store runs without the ORM (pg 23505, better-sqlite3). */
function isDriverUniqueViolation(err: unknown): err is Error {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && (code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE");
}

/**
 * Uniqueness is the database's job (docs/architecture.md style 7): run the write, and turn the
 * portable constraint violation into the contract's 409.
 */
export async function mapUniqueViolation<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException || isDriverUniqueViolation(err)) {
      const column = violatedUsersColumn(err);
      if (column === "username") throw new AuthError("USERNAME_IS_ALREADY_TAKEN", { cause: err });
      if (column === "email") throw new AuthError("USER_ALREADY_EXISTS", { cause: err });
    }
    throw err;
  }
}
