import { Writable } from "node:stream";
import { pino, type Logger } from "pino";

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, raw (JSON text). */
  readonly text: string;
  /** Every line written so far, parsed. */
  lines(): Record<string, any>[];
}

/** A real pino logger (level `trace` unless told) whose lines are kept in memory. */
export function captureLog(level: pino.LevelWithSilent = "trace"): CapturedLog {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  // sync: every line is in `chunks` as soon as the log call returns
  const logger = pino({ level }, stream);
  return {
    logger,
    get text() {
      return chunks.join("");
    },
    lines() {
      return chunks
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>);
    },
  };
}
