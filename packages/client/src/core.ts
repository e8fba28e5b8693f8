/**
 * The typed client's runtime (docs/getting-started.md "The light client"), for any router type:
 * `@portcullis/client` types it with the generated declarations (./app-router.d.ts), the server
 * package's `portcullis/client` with the router itself (src/client/index.ts). Loads
 * `@trpc/client` and nothing else.
 */
import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient, type TRPCLink } from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";

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

async function supply<T>(value: Supplier<T>): Promise<Maybe<T>> {
  return typeof value === "function" ? await (value as () => Maybe<T> | Promise<Maybe<T>>)() : value;
}

export function createClientFor<TRouter extends AnyTRPCRouter>(options: PortcullisClientOptions): TRPCClient<TRouter> {
  const base = String(options.url).replace(/\/+$/, "");
  // One request per call: the server turns batching off. Built for any router (no transformer),
  // then typed as TRouter's: the link itself does not depend on the router's procedures.
  const link = httpLink({
    url: `${base}${TRPC_PATH}`,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    async headers() {
      const extra = typeof options.headers === "function" ? await options.headers() : options.headers;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(extra ?? {})) {
        if (value !== undefined) headers[name.toLowerCase()] = value;
      }
      const [token, cookie, origin] = await Promise.all([supply(options.token), supply(options.cookie), supply(options.origin)]);
      if (token) headers.authorization = `Bearer ${token}`;
      if (cookie) headers.cookie = cookie;
      if (origin) headers.origin = origin;
      return headers;
    },
  });
  return createTRPCClient<TRouter>({ links: [link as unknown as TRPCLink<TRouter>] });
}
