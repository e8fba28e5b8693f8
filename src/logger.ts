import { pino, type Logger } from "pino";

/** Request headers that carry credentials: never in a log line, whoever logs a request object. */
const REDACT = ["req.headers.authorization", "req.headers.cookie"];

/**
 * The service's logger: JSON lines on stdout, each written by the event loop as it is logged.
 *
 * Not pino's default destination, which writes asynchronously through libuv's thread pool: the
 * pool where password hashes run, one thread per core (bin/portcullis.cjs). Under sign-ins every
 * log write waited behind all the queued hashes, so lines came out late, in a flood seconds late,
 * and piled up in memory meanwhile: a minute of get-session load with one sign-in in 50 held
 * 17 MiB of unwritten lines and grew the heap by 1 MiB/s (RSS 175-209 MiB, 133 MiB with this).
 * A write(2) per line costs the loop less than handing it to the pool did (get-session with
 * logging on: 45k against 43k requests/s), and a crash loses nothing: there is no buffer.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true })): Logger {
  return pino({ level, redact: REDACT }, destination);
}
