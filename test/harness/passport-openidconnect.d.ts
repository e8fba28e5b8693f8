/** The part of passport-openidconnect 0.1 (untyped) the relying-party test drives. */
declare module "passport-openidconnect" {
  export class Strategy {
    constructor(options: Record<string, unknown>, verify: (...args: never[]) => void);
    authenticate(req: unknown, options: Record<string, unknown>): void;
  }
}
