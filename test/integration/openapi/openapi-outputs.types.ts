/**
 * Compile-time half of the OpenAPI output check (`tsc --noEmit` reads this file; vitest does not
 * run it): every documented procedure's real output (what tRPC infers, JSON-serialised) must be
 * assignable to the type of the schema its module's `*.openapi.ts` documents. The runtime half,
 * real answers validated against the document, is openapi.test.ts.
 */
import type { inferRouterOutputs } from "@trpc/server";
import type { z } from "zod";
import type { DocumentedOperations } from "../../../src/openapi/modules.ts";
import type { AppRouter } from "../../../src/trpc/app-router.ts";

type Outputs = inferRouterOutputs<AppRouter>;

/** The output at a dotted procedure path (`admin.listUsers`). */
type At<T, P extends string> = P extends `${infer Head}.${infer Rest}`
  ? Head extends keyof T
    ? At<T[Head], Rest>
    : never
  : P extends keyof T
    ? T[P]
    : never;

/** true, or what does not fit: the real output and the documented type side by side in the error. */
type Fits<Real, Schema extends z.ZodType> = [Real] extends [never]
  ? "no such procedure"
  : [Real] extends [z.infer<Schema>]
    ? true
    : { real: Real; documented: z.infer<Schema> };

type Check<K extends keyof DocumentedOperations & string> = Fits<At<Outputs, K>, DocumentedOperations[K]["output"]>;

/** The documented procedures whose output does not fit their schema (never, when every one does). */
type Misfits = { [K in keyof DocumentedOperations & string]: Check<K> extends true ? never : K }[keyof DocumentedOperations & string];

export const everyOutputFits: [Misfits] extends [never] ? true : { misfits: Misfits } = true;

// The check can fail: a schema that leaves out a field the output has is refused...
// @ts-expect-error sign-up answers `token: string | null`, not `number`
export const wrongType: Fits<Outputs["signUp"]["email"], z.ZodObject<{ token: z.ZodNumber; user: z.ZodUnknown }>> = true;
// ...and so is a documented procedure that does not exist.
// @ts-expect-error no procedure at this path
export const noProcedure: Fits<At<Outputs, "signUp.phone">, z.ZodUnknown> = true;
