/**
 * `portcullis/router`: the router's TYPE only, for apps that build their own tRPC client
 * (React Query, links of their choice). Nothing here exists at runtime.
 *
 *   import type { AppRouter } from "portcullis/router";
 *   const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/api/trpc` })] });
 */
export type { AppRouter, RouterInputs, RouterOutputs } from "./index.ts";
