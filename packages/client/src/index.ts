/**
 * `@portcullis/client`: the typed client alone (docs/getting-started.md "The light client").
 * Depends on `@trpc/client` only (and its peer `@trpc/server`, for types); the router's types are
 * the generated, self-contained ./app-router.d.ts, so an app's `tsc` reads no server file.
 *
 *   import { createPortcullisClient } from "@portcullis/client";
 *   const auth = createPortcullisClient({ url: "http://localhost:3000", token: () => store.token });
 */
import type { TRPCClient, TRPCClientError } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter, AuthErrorCode } from "./app-router.js";
import { createClientFor, TRPCClientError as ClientError, type PortcullisClientOptions } from "./core.js";

export { TRPC_PATH, TRPCClientError, type PortcullisClientOptions, type Supplier } from "./core.js";
export type { AppRouter, AuthErrorCode };

export type PortcullisClient = TRPCClient<AppRouter>;
/** Inputs of every procedure, e.g. `RouterInputs["signUp"]["email"]`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Outputs of every procedure, e.g. `RouterOutputs["getSession"]`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** A signed-in `{ session, user }` pair as `getSession` returns it. */
export type SessionWithUser = NonNullable<RouterOutputs["getSession"]>;
export type PublicUser = SessionWithUser["user"];
export type PublicSession = SessionWithUser["session"];
/** What a failed call rejects with: `error.data?.authCode` holds the contract's code. */
export type PortcullisClientError = TRPCClientError<AppRouter>;

export function createPortcullisClient(options: PortcullisClientOptions): PortcullisClient {
  return createClientFor<AppRouter>(options);
}

/** Narrows an unknown error to a PortcullisClientError (a TRPCClientError from this client). */
export function isPortcullisClientError(err: unknown): err is PortcullisClientError {
  return err instanceof ClientError;
}

/** The contract's code of a failed call, or undefined for anything else (network errors...). */
export function authErrorCode(err: unknown): AuthErrorCode | undefined {
  return isPortcullisClientError(err) ? err.data?.authCode : undefined;
}
