import { UniqueConstraintViolationException } from "@mikro-orm/core";
import { AuthError } from "../errors.ts";

/**
 * Uniqueness is the database's job (ARCHITECTURE.md style 7): run the write, and turn the
 * portable constraint violation into the contract's 409.
 */
export async function mapUniqueViolation<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      const text = `${err.message}`;
      if (text.includes("username")) throw new AuthError("USERNAME_IS_ALREADY_TAKEN", { cause: err });
      if (text.includes("email")) throw new AuthError("USER_ALREADY_EXISTS", { cause: err });
    }
    throw err;
  }
}
