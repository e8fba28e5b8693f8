import type { Metrics } from "./counters.ts";

/**
 * The mailer as the app sees it when metrics are on: every send() counted as sent or failed
 * (a refused or unreachable SMTP server, a send hook that throws). Everything else is the
 * mailer's own, through the prototype chain.
 */
export function countingMailer<M extends { send(...args: never[]): Promise<unknown> }>(mailer: M, metrics: Metrics): M {
  const counted = Object.create(mailer) as M;
  const send = mailer.send.bind(mailer) as (...args: unknown[]) => Promise<unknown>;
  Object.defineProperty(counted, "send", {
    value: (...args: unknown[]) =>
      send(...args).then(
        (result) => {
          metrics.mailSent++;
          return result;
        },
        (err: unknown) => {
          metrics.mailFailed++;
          throw err;
        },
      ),
  });
  return counted;
}
