/**
 * One run of one scenario against one server: every step leaves a record of what the client
 * saw (status, error code, normalised body, what happened to the session), and the two runs'
 * records are compared step by step. A step that cannot go on (a mail that never came, a value
 * the next step needs) ends the run with an `(aborted)` record: the steps after it show as
 * missing, so a missing feature is a difference, never a crash of the test.
 */
import type { TestOidcProvider } from "../harness/oidc.ts";
import { Actor, type AuthClient } from "./actor.ts";
import { Normaliser } from "./normalise.ts";
import type { Side, Target, Variant } from "./targets.ts";

export interface StepRecord {
  step: string;
  /** `METHOD /path` the step called (the same on both sides: the same SDK call). */
  endpoint?: string;
  status?: number;
  /** Error code (`code`, or the RFC 6749 `error` of device-flow errors). */
  code?: string;
  body?: unknown;
  /** A `set-auth-token` header came with the response. */
  authToken?: boolean;
  sessionCookie?: NonNullable<Actor["last"]>["sessionCookie"];
  location?: string;
}

export interface Scenario {
  name: string;
  /** better-auth options for this scenario (targets.ts Variant; why: allowlist.ts `variants`). */
  variant?: Variant;
  run(s: Run): Promise<void>;
}

class Abort extends Error {}

interface ClientResult<T> {
  data: T | null;
  error: ({ status: number; statusText?: string; code?: string; message?: string } & Record<string, unknown>) | null;
}

export const PASSWORD = "correct horse battery";
/** What a browser sends on a top-level navigation. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

export class Run {
  readonly records: StepRecord[] = [];
  readonly side: Side;
  private readonly norm: Normaliser;
  private readonly addresses = new Set<string>();
  private readonly names = new Map<string, number>();

  constructor(
    readonly target: Target,
    readonly oidc: TestOidcProvider,
    /** Short per-scenario tag for unique emails and usernames (the same on both sides). */
    private readonly tag: string,
  ) {
    this.side = target.side;
    this.norm = new Normaliser({ [target.origin]: "<self>", [oidc.issuer]: "<provider>" });
  }

  actor(name: string): Actor {
    return new Actor(this.target.origin, name);
  }

  email(name: string): string {
    const email = `${name}.${this.tag}@example.test`;
    this.addresses.add(email);
    return email;
  }

  username(name: string): string {
    return `${name}_${this.tag}`.slice(0, 30);
  }

  /** A provider account subject, unique per scenario. */
  sub(name: string): string {
    return `${name}-${this.tag}`;
  }

  private push(record: StepRecord): void {
    const seen = (this.names.get(record.step) ?? 0) + 1;
    this.names.set(record.step, seen);
    this.records.push(seen === 1 ? record : { ...record, step: `${record.step} #${seen}` });
  }

  /** A call through the client SDK; returns `data` (null on error). */
  async call<T>(step: string, actor: Actor, fn: (client: AuthClient) => Promise<ClientResult<T>>): Promise<T | null> {
    actor.last = null;
    const { data, error } = await fn(actor.client);
    const last = actor.last as Actor["last"];
    const record: StepRecord = { step, endpoint: last?.endpoint ?? "(no request)", status: last?.status ?? error?.status };
    if (error) {
      const { status: _s, statusText: _t, code, error: rfcError, ...rest } = error;
      record.code = (code ?? rfcError) as string | undefined;
      record.body = this.norm.value(errorBody(rest));
    } else record.body = this.norm.value(data);
    this.session(record, last);
    this.push(record);
    return data;
  }

  /**
   * The browser following a link or a redirect (no SDK): a top-level navigation, so it asks
   * for HTML first as browsers do. Records status, Location (resolved: a relative and an
   * absolute Location to the same place are the same to a browser), body.
   */
  async browse(step: string, actor: Actor, url: string): Promise<{ status: number; location: string | null; json: any }> {
    const target = new URL(url, this.target.origin);
    return this.record(step, actor, target, await actor.fetch(target, { headers: { accept: BROWSER_ACCEPT } }));
  }

  /** The browser submitting a form (`application/x-www-form-urlencoded`, a top-level navigation), recorded like browse. */
  async submit(step: string, actor: Actor, url: string, fields: Record<string, string>): Promise<{ status: number; location: string | null; json: any }> {
    const target = new URL(url, this.target.origin);
    const init = { method: "POST", body: new URLSearchParams(fields).toString(), headers: { accept: BROWSER_ACCEPT, "content-type": "application/x-www-form-urlencoded" } };
    return this.record(step, actor, target, await actor.fetch(target, init));
  }

  private async record(step: string, actor: Actor, target: URL, res: Response): Promise<{ status: number; location: string | null; json: any }> {
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const record: StepRecord = { step, endpoint: actor.last?.endpoint, status: res.status };
    const isError = res.status >= 400 && json && typeof json === "object";
    if (isError) {
      const { code, error: rfcError, ...rest } = json as Record<string, unknown>;
      record.code = (code ?? rfcError) as string | undefined;
      record.body = this.norm.value(errorBody(rest));
    } else if (json !== undefined) record.body = this.norm.value(json);
    else if (text) record.body = `<${(res.headers.get("content-type") ?? "text").split(";")[0]}>`;
    const location = res.headers.get("location");
    if (location) record.location = this.norm.url(new URL(location, target).toString());
    this.session(record, actor.last);
    this.push(record);
    return { status: res.status, location, json };
  }

  /** The next mail to `address`: records its normalised link; ends the run when none came. */
  async mail(step: string, address: string): Promise<string> {
    const link = await this.target.nextMail(address);
    this.push({ step, body: link === null ? "(no mail)" : this.norm.url(link) });
    if (link === null) throw new Abort(`no mail to ${address}`);
    return link;
  }

  /** The one-time code of the next mail to `address` (two-factor OTP): records its shape; ends the run when none came. */
  async code(step: string, address: string): Promise<string> {
    const code = await this.target.nextCode(address);
    this.push({ step, body: code === null ? "(no code)" : code.replace(/[0-9]/g, "#") });
    if (code === null) throw new Abort(`no code mailed to ${address}`);
    return code;
  }

  /** A value the scenario computed (e.g. who a listing contains), recorded as a step. */
  note(step: string, value: unknown): void {
    this.push({ step, body: this.norm.value(value) });
  }

  /** Ends the run when a value a later step needs is missing. */
  need<T>(value: T | null | undefined, what: string): T {
    if (value === null || value === undefined) throw new Abort(`missing: ${what}`);
    return value;
  }

  private session(record: StepRecord, last: Actor["last"]): void {
    if (last?.authToken) record.authToken = true;
    if (last?.sessionCookie) record.sessionCookie = last.sessionCookie;
  }

  /** Runs the scenario; afterwards records mails nobody read (a mail one server sends and the other does not). */
  async execute(scenario: Scenario): Promise<void> {
    this.target.beginScenario(scenario.variant ?? {});
    try {
      await scenario.run(this);
    } catch (err) {
      this.push({ step: "(aborted)", body: err instanceof Abort ? err.message : `threw: ${String((err as Error)?.stack ?? err)}` });
      return;
    }
    const unread = await this.target.unreadMails([...this.addresses]);
    if (Object.keys(unread).length > 0) this.push({ step: "(unread mails)", body: unread });
  }
}

/** Error bodies: human text is not compared (docs/wire-contract.md §1: the code is the contract). */
function errorBody(rest: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...rest };
  for (const key of ["message", "error_description"]) if (typeof out[key] === "string") out[key] = "<message>";
  return out;
}
