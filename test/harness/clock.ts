import type { Clock } from "../../src/config/index.ts";

/** Injected time (docs/architecture.md style 5): tests move it instead of sleeping. */
export class FakeClock implements Clock {
  private ms: number;
  constructor(start: Date = new Date()) {
    this.ms = start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(date: Date): void {
    this.ms = date.getTime();
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
