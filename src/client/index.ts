/**
 * Typed client for Portcullis' tRPC API (`{url}/api/trpc`).
 *
 *   import { createPortcullisClient } from "portcullis/client";
 *   const auth = createPortcullisClient({ url: "http://localhost:3000", token: () => store.token });
 *   const session = await auth.getSession.query();
 *
 * Only server TYPES are imported here (`import type`): bundling this module pulls in
 * @trpc/client and nothing of the server.
 */
import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { ErrorCode } from "../errors.ts";
import type { AppRouter } from "../trpc/app-router.ts";

export type { AppRouter };
export { TRPCClientError };

/** The tRPC path the service mounts its router on. */
export const TRPC_PATH = "/api/trpc";

type Maybe<T> = T | null | undefined;
/** A value, or a function called before every request (it may be async). */
export type Supplier<T> = Maybe<T> | (() => Maybe<T> | Promise<Maybe<T>>);
type HeaderRecord = Record<string, string | undefined>;

export interface PortcullisClientOptions {
  /** Base URL of the service, e.g. `http://localhost:3000` (tRPC is served at `${url}/api/trpc`). */
  url: string | URL;
  /** Session token, sent as `Authorization: Bearer <token>` (bearer requests need no Origin). */
  token?: Supplier<string>;
  /**
   * A `Cookie` header to forward (e.g. the incoming request's, in a server-side app). Mutations
   * that carry the session cookie are CSRF-checked: also pass `origin`.
   */
  cookie?: Supplier<string>;
  /** Sent as the `Origin` header: the service's own origin or one of its `trustedOrigins`. */
  origin?: Supplier<string>;
  /** Extra headers for every request. `token`, `cookie` and `origin` win over these. */
  headers?: HeaderRecord | (() => HeaderRecord | Promise<HeaderRecord>);
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

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

/** Narrows an unknown error to a PortcullisClientError (a TRPCClientError from this client). */
export function isPortcullisClientError(err: unknown): err is PortcullisClientError {
  return err instanceof TRPCClientError;
}

/** The contract's code of a failed call, or undefined for anything else (network errors...). */
export function authErrorCode(err: unknown): AuthErrorCode | undefined {
  return isPortcullisClientError(err) ? err.data?.authCode : undefined;
}

async function supply<T>(value: Supplier<T>): Promise<Maybe<T>> {
  return typeof value === "function" ? await (value as () => Maybe<T> | Promise<Maybe<T>>)() : value;
}

export function createPortcullisClient(options: PortcullisClientOptions): PortcullisClient {
  const base = String(options.url).replace(/\/+$/, "");
  return createTRPCClient<AppRouter>({
    links: [
      // One request per call: the server turns batching off.
      httpLink({
        url: `${base}${TRPC_PATH}`,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        async headers() {
          const extra = typeof options.headers === "function" ? await options.headers() : options.headers;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(extra ?? {})) {
            if (value !== undefined) headers[name.toLowerCase()] = value;
          }
          const [token, cookie, origin] = await Promise.all([
            supply(options.token),
            supply(options.cookie),
            supply(options.origin),
          ]);
          if (token) headers.authorization = `Bearer ${token}`;
          if (cookie) headers.cookie = cookie;
          if (origin) headers.origin = origin;
          return headers;
        },
      }),
    ],
  });
}
