import { loadPackage } from "../load.ts";

/**
 * MikroORM's runtime values, loaded with require() (types still come from `import type`).
 * Its packages are CommonJS: imported as ESM, node runs cjs-module-lexer over every module
 * their index files re-export to find the named exports, which cost ~150 ms of every start on
 * this 2-core machine (the MikroORM stack loads in 220 ms by require, 340-450 ms by import).
 * Every value of @mikro-orm/* the service uses comes through here or through loadPackage.
 */
const core = loadPackage("@mikro-orm/core") as typeof import("@mikro-orm/core");

export const { defineEntity, DriverException, FlushMode, ForeignKeyConstraintViolationException, LockMode, raw, UniqueConstraintViolationException } = core;
