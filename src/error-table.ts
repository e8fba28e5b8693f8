/**
 * The shape of an error table: code → [HTTP status, public message, wire code when it differs].
 * Each family owns one (`src/modules/<family>/<family>.errors.ts`; the kernel's is
 * src/core/errors.ts) and src/errors.ts composes them, refusing a code declared twice at compile
 * time. A leaf: nothing to import back.
 */
export type ErrorTable = Readonly<Record<string, readonly [number, string] | readonly [number, string, string]>>;
