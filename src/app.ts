import type { MikroORM } from "@mikro-orm/core";
import type { Logger } from "pino";
import type { Clock } from "./core/clock.ts";
import type { ResolvedConfig } from "./config/index.ts";
import type { SessionStore } from "./db/session-store/index.ts";
import type { Mailer } from "./mail/mailer.ts";
import type { SessionCache } from "./core/session/cache.ts";
import type { InvalidationChannel } from "./core/session/invalidation.ts";
import type { RateLimiter } from "./rate-limit/rate-limit.ts";
import type { AddressLimiter } from "./rate-limit/address-limit.ts";
import type { StepUpLimiter } from "./rate-limit/step-up-limit.ts";
import type { Metrics } from "./metrics/counters.ts";
import type { Tracing } from "./tracing/index.ts";
import type { Registry } from "./core/registry.ts";
import type { Dialect } from "./db/target.ts";

/** Everything one Portcullis instance owns; built by createPortcullis, no module singletons. */
export interface App {
  config: ResolvedConfig;
  /** What each family put into the kernel (src/modules/index.ts): holdings, sign-in steps, mailed link kinds. */
  registry: Registry<App>;
  /** Secrets newest first: the first seals and signs; all of them open and verify (rotation). */
  secrets: string[];
  /** secrets[0]. */
  secret: string;
  orm: MikroORM;
  /** The database's dialect: what SQL behind src/db/ may use. */
  dialect: Dialect;
  sessions: SessionStore;
  sessionCache: SessionCache;
  /** Tells other instances what the session cache evicted (PostgreSQL NOTIFY, cluster IPC, or nothing). */
  invalidation: InvalidationChannel;
  rateLimiter: RateLimiter;
  /** Password-reset and verification mails per address (rateLimit.perAddress). */
  addressLimiter: AddressLimiter;
  /** Current-password checks per user and per address, across every route that makes one (rate-limit/step-up-limit.ts). */
  stepUpLimiter: StepUpLimiter;
  /** SMTP, or the log when no SMTP URL is configured. */
  mailer: Mailer;
  logger: Logger;
  clock: Clock;
  /** Cookie name of the session token (with `__Secure-` on https). */
  cookieName: string;
  /** The service's own origin, for CSRF and callback URL checks. */
  origin: string;
  /** Plain counters behind GET /metrics; undefined unless `metrics.enabled` (src/metrics). */
  metrics?: Metrics;
  /** OpenTelemetry spans; undefined unless tracing is on (src/tracing). */
  tracing?: Tracing;
}
