import { pino } from "pino";

/**
 * The log lines of `serve`'s start, held until it listens: then written as they came. A start
 * that fails writes only its warnings and errors (they may say why), and the fatal lines on
 * stderr (cli.ts) come last: an operator reading the end of the output reads the cause, not "no
 * SMTP configured" (docs/operations.md, Start-up and configuration errors).
 */
export class StartupLog {
  private held: string[] | null = [];
  /** stdout, written by the event loop as each line comes (src/logger.ts says why). */
  private readonly out = pino.destination({ dest: 1, sync: true });

  /** A pino destination: held while starting, straight to stdout after. */
  readonly destination = {
    write: (line: string) => {
      if (this.held) this.held.push(line);
      else this.out.write(line);
    },
  };

  /** Started: every held line, in order; later lines go straight out. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const line of held) this.out.write(line);
  }

  /** Failed: the held warnings and errors only (pino's level 40 and up). */
  fail(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const line of held) if (levelOf(line) >= 40) this.out.write(line);
  }
}

function levelOf(line: string): number {
  const level = /^\{"level":(\d+)/.exec(line)?.[1];
  return level === undefined ? 60 : Number(level);
}
