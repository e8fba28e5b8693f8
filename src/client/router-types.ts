/** What scripts/client-types.ts prints into the light client's declarations (packages/client): the router's type and the error codes. */
export type { AppRouter } from "../trpc/app-router.ts";
export type { ErrorCode } from "../errors.ts";
