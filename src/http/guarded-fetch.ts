import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";
import type * as Undici from "undici";
import type { z } from "zod";
import { loadPackage } from "../load.ts";
import { createHttpClient, request } from "./client.ts";

/**
 * GETs of a URL someone else chose (a client's `jwks_uri`, docs/oidc-provider.md "Client
 * authentication"), guarded against server-side request forgery (OWASP SSRF Prevention Cheat
 * Sheet): https only; the host's name resolved first, and every address it resolves to must be
 * public unicast (no loopback, RFC 1918, link-local, CGNAT, unique-local, unspecified,
 * multicast, documentation or reserved ranges); the connection then goes to that checked address
 * and no other (undici's `connect.lookup` answers it, so a second DNS answer cannot switch it:
 * no DNS rebinding), with TLS still verified against the name. No redirects, one deadline for
 * the whole exchange, a small size cap, and a zod schema for the JSON (src/http/client.ts).
 * `allowPrivate` (`oidcProvider.registration.allowPrivateUris`, for tests and closed networks)
 * lifts the address rule and allows plain http.
 */

export interface GuardOptions {
  allowPrivate: boolean;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export interface GuardedFetchOptions extends GuardOptions {
  timeoutMs?: number;
  maxBytes?: number;
  /** The name's addresses; default the system resolver (dns.lookup). Injected by tests. */
  resolve?: Resolver;
}

const systemResolve: Resolver = (host) => lookup(host, { all: true, verbatim: true });

export const GUARDED_TIMEOUT_MS = 5_000;
export const GUARDED_MAX_BYTES = 64 * 1024;
/** How long a registration waits for DNS before it leaves the address check to fetch time. */
const REGISTRATION_DNS_MS = 2_000;

export class GuardedFetchError extends Error {
  override name = "GuardedFetchError";
}

const undici = () => loadPackage("undici") as typeof Undici;

/** Everything that is not public unicast IPv4 (IANA special-purpose registry). */
const privateV4 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
  ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) privateV4.addSubnet(net, prefix, "ipv4");

/** IPv6 outside global unicast 2000::/3 is never public (::, ::1, fc00::/7, fe80::/10, ff00::/8, IPv4-mapped, NAT64...). */
const globalV6 = new BlockList();
globalV6.addSubnet("2000::", 3, "ipv6");
/** Inside it: Teredo, benchmarking, ORCHID and documentation ranges. */
const privateV6 = new BlockList();
for (const [net, prefix] of [["2001::", 32], ["2001:2::", 48], ["2001:10::", 28], ["2001:20::", 28], ["2001:db8::", 32], ["3fff::", 20]] as const) {
  privateV6.addSubnet(net, prefix, "ipv6");
}

/** The eight 16-bit groups of an IPv6 address (already known to be one). */
function v6Groups(ip: string): number[] {
  let s = ip.split("%")[0]!;
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number) as [number, number, number, number];
    s = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = s.split("::");
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill("0");
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** Whether a literal IP address is public unicast. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !privateV4.check(ip, "ipv4");
  if (family !== 6) return false;
  const bare = ip.split("%")[0]!;
  if (!globalV6.check(bare, "ipv6") || privateV6.check(bare, "ipv6")) return false;
  const g = v6Groups(bare);
  // 6to4 (2002::/16) carries an IPv4 address: it must be public too.
  if (g[0] === 0x2002) return isPublicAddress(`${g[1]! >> 8}.${g[1]! & 0xff}.${g[2]! >> 8}.${g[2]! & 0xff}`);
  return true;
}

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");
const isLocalName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/** Why the URL may not be fetched, from its text alone (scheme, credentials, a literal address); null when nothing is wrong yet. */
export function urlProblem(raw: string, opts: GuardOptions): string | null {
  if (!URL.canParse(raw)) return "must be an absolute URL";
  const url = new URL(raw);
  if (url.protocol !== "https:" && !(opts.allowPrivate && url.protocol === "http:")) return "must be an https URL";
  if (url.username || url.password) return "must not carry credentials";
  if (url.hash) return "must not have a fragment";
  const host = hostOf(url);
  if (!opts.allowPrivate && (isLocalName(host) || (isIP(host) && !isPublicAddress(host)))) return "must not point at a private or loopback address";
  return null;
}

async function resolveAll(host: string, timeoutMs: number, resolve: Resolver = systemResolve): Promise<{ address: string; family: number }[]> {
  if (isIP(host)) return [{ address: host, family: isIP(host) }];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GuardedFetchError("DNS lookup timed out")), timeoutMs);
  });
  try {
    return await Promise.race([resolve(host), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The registration's check: the text (urlProblem), then, when the name resolves now, every
 * address. A name that does not resolve yet is accepted: the fetch checks again anyway.
 */
export async function registrableUriProblem(raw: string, opts: GuardOptions): Promise<string | null> {
  const problem = urlProblem(raw, opts);
  if (problem || opts.allowPrivate) return problem;
  let addresses: { address: string }[];
  try {
    addresses = await resolveAll(hostOf(new URL(raw)), REGISTRATION_DNS_MS);
  } catch {
    return null;
  }
  return addresses.some((a) => !isPublicAddress(a.address)) ? "must not point at a private or loopback address" : null;
}

type LookupCallback = (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;

/** GET `raw` under the guard; the JSON body parsed with `schema`. Any refusal or failure throws. */
export async function guardedGetJson<T>(raw: string, schema: z.ZodType<T>, opts: GuardedFetchOptions): Promise<T> {
  const problem = urlProblem(raw, opts);
  if (problem) throw new GuardedFetchError(`refused: ${problem}`);
  const timeoutMs = opts.timeoutMs ?? GUARDED_TIMEOUT_MS;
  const url = new URL(raw);
  const addresses = await resolveAll(hostOf(url), timeoutMs, opts.resolve).catch((err: unknown) => {
    throw new GuardedFetchError("DNS lookup failed", { cause: err });
  });
  if (addresses.length === 0) throw new GuardedFetchError("DNS lookup found no address");
  if (!opts.allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) throw new GuardedFetchError("refused: a private or loopback address");
  const first = addresses[0]!;
  const agent = new (undici().Agent)({
    connect: {
      timeout: timeoutMs,
      // The checked addresses (all of them for happy eyeballs), whatever the name would resolve to now.
      lookup: (_host: string, options: { all?: boolean }, callback: LookupCallback) =>
        options.all ? callback(null, addresses) : callback(null, first.address, first.family),
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  // One deadline for connect, headers and a slowly dripped body together.
  const timer = setTimeout(() => void agent.destroy(new GuardedFetchError("timed out")).catch(() => {}), timeoutMs);
  try {
    const http = createHttpClient({ connectTimeoutMs: timeoutMs, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs, maxResponseBytes: opts.maxBytes ?? GUARDED_MAX_BYTES }, agent);
    return await request(http, { method: "GET", url, schema });
  } finally {
    clearTimeout(timer);
    void agent.destroy().catch(() => {});
  }
}
