import { createRequire } from "node:module";

/**
 * Loads a CommonJS package where it is first needed, synchronously: a store,
 * a driver or a transport the configuration does not use never enters the process. Types come
 * from `typeof import(...)` at the call site.
 */
export const loadPackage = createRequire(import.meta.url);
