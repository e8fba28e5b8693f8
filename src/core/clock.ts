/**
 * Time, injected (docs/architecture.md "Style" 5): `createPortcullis` takes a clock from the
 * config and everything asks it, so tests move time instead of sleeping. A leaf: config and the
 * social providers import it too.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
