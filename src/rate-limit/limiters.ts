import type * as Flexible from "rate-limiter-flexible";
import { loadPackage } from "../load.ts";

/**
 * rate-limiter-flexible's classes, one file each where they are needed: its index requires all
 * of its stores (Mongo, MySQL, Dynamo, Etcd, ...; 36 modules) the moment anything is imported
 * from it. The package has no `exports` map, so its lib/ files are its public layout.
 */
const lib = <K extends keyof typeof Flexible>(name: K): (typeof Flexible)[K] => loadPackage(`rate-limiter-flexible/lib/${name}.js`) as (typeof Flexible)[K];

export const RateLimiterMemory = lib("RateLimiterMemory");
export const RateLimiterRes = lib("RateLimiterRes");
export type RateLimiterMemory = Flexible.RateLimiterMemory;
export type RateLimiterRes = Flexible.RateLimiterRes;
export type RateLimiterAbstract = Flexible.RateLimiterAbstract;

/** A store class, loaded when the configuration asks for it. */
export const loadLimiter = lib;
