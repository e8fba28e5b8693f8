/**
 * Typed client for Portcullis' tRPC API (`{url}/api/trpc`), as the server package ships it
 * (`portcullis/client`). The runtime is the light client's (packages/client, published as
 * `@portcullis/client`), typed here with the router itself.
 *
 *   import { createPortcullisClient } from "portcullis/client";
 *   const auth = createPortcullisClient({ url: "http://localhost:3000", token: () => store.token });
 *   const session = await auth.getSession.query();
 *
 * Only server TYPES are imported here (`import type`): bundling this module pulls in
 * @trpc/client and nothing of the server.
 */
import type { TRPCClient, TRPCClientError } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { ErrorCode } from "../errors.ts";
import type { AppRouter } from "../trpc/app-router.ts";
import { createClientFor, TRPCClientError as ClientError, type PortcullisClientOptions } from "../../packages/client/src/core.ts";

export type { AppRouter };
export { TRPC_PATH, TRPCClientError, type PortcullisClientOptions, type Supplier } from "../../packages/client/src/core.ts";

export type PortcullisClient = TRPCClient<AppRouter>;
/** Inputs of every procedure, e.g. `RouterInputs["signUp"]["email"]`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Outputs of every procedure, e.g. `RouterOutputs["getSession"]`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
/** A signed-in `{ session, user }` pair as `getSession` returns it. */
export type SessionWithUser = NonNullable<RouterOutputs["getSession"]>;
export type PublicUser = SessionWithUser["user"];
export type PublicSession = SessionWithUser["session"];

/** The contract's error codes (docs/wire-contract.md), found in `error.data.authCode`. */
export type AuthErrorCode = ErrorCode;
/**
 * What a failed call rejects with. `error.data?.authCode` holds the contract's code,
 * `error.data?.httpStatus` the HTTP status, `error.data?.issues` the bad fields of a
 * VALIDATION_ERROR and `error.data?.requestId` the log reference of a 5xx.
 */
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
