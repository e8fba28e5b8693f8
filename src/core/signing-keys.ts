import type { JWK } from "jose";
import type { App } from "../app.ts";
import { appAead } from "../crypto/app-aead.ts";
import { JwksKey, type IJwksKey } from "../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../db/mikro-orm.ts";
import { loadJose } from "./jose.ts";

/**
 * The signing keys (docs/machine-access.md "Keys"): made on first use, the private half sealed
 * at rest (AES-256-GCM with the service secrets, src/crypto/aead.ts), a new one every
 * `jwt.rotationDays`, one current key per algorithm in use (the JWT family's `jwt.alg`, the
 * OpenID provider's ID-token algorithm: families declare theirs, core/registry.ts KeyUses). Keys
 * are numbered (`epoch`, unique across algorithms): instances that rotate at once all try to
 * insert the next number, one wins, the others read its key. A retired key stays published until
 * every token it signed has expired (the longest lifetime its algorithm is used for).
 */

export type JwtAlg = "EdDSA" | "ES256" | "RS256";

/** What jose signs with. */
type PrivateKey = Awaited<ReturnType<typeof import("jose").importJWK>>;

export interface SigningKey {
  kid: string;
  alg: JwtAlg;
  privateKey: PrivateKey;
  signsUntil: Date;
}

/** Clock skew a resource server may apply beyond a token's `exp` (published that much longer). */
const SKEW_SEC = 60;
const DAY_MS = 24 * 3600 * 1000;

interface KeyState {
  current?: SigningKey;
  /** The refresh in flight: concurrent callers of this instance share it. */
  refreshing?: Promise<SigningKey>;
}

const states = new WeakMap<App, Map<JwtAlg, KeyState>>();

const aad = (kid: string) => `jwks:${kid}`;

function stateOf(app: App, alg: JwtAlg): KeyState {
  let byAlg = states.get(app);
  if (!byAlg) states.set(app, (byAlg = new Map()));
  let state = byAlg.get(alg);
  if (!state) byAlg.set(alg, (state = {}));
  return state;
}

const usable = (app: App, key: { alg: string; signsUntil: Date }, alg: JwtAlg) => key.alg === alg && key.signsUntil.getTime() > app.clock.now().getTime();

async function importPrivate(app: App, row: IJwksKey): Promise<SigningKey> {
  const jose = await loadJose();
  const jwk = JSON.parse(appAead(app).decrypt(row.privateKey, aad(row.id))) as JWK;
  const privateKey = await jose.importJWK(jwk, row.alg);
  return { kid: row.id, alg: row.alg as JwtAlg, privateKey, signsUntil: row.signsUntil };
}

/** The newest key of `alg`, when given; of any algorithm otherwise (the last number taken). */
const newest = async (app: App, alg?: JwtAlg) =>
  (await app.orm.em.fork().find(JwksKey, alg ? { alg } : {}, { orderBy: { epoch: "desc" }, limit: 1, disableIdentityMap: true }))[0] ?? null;

/** A new key numbered `epoch`; null when another instance inserted that number first. */
async function createKey(app: App, alg: JwtAlg, epoch: number): Promise<IJwksKey | null> {
  const jose = await loadJose();
  const pair = await jose.generateKeyPair(alg, { extractable: true, ...(alg === "EdDSA" ? { crv: "Ed25519" } : alg === "RS256" ? { modulusLength: 2048 } : {}) });
  const publicJwk = await jose.exportJWK(pair.publicKey);
  const kid = await jose.calculateJwkThumbprint(publicJwk, "sha256");
  const now = app.clock.now();
  const row = {
    id: kid,
    epoch,
    alg,
    publicKey: JSON.stringify(publicJwk),
    privateKey: appAead(app).encrypt(JSON.stringify(await jose.exportJWK(pair.privateKey)), aad(kid)),
    createdAt: now,
    signsUntil: new Date(now.getTime() + app.config.jwt.rotationDays * DAY_MS),
  };
  try {
    await app.orm.em.fork().insert(JwksKey, row);
    return row;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return null;
    throw err;
  }
}

async function refresh(app: App, alg: JwtAlg): Promise<SigningKey> {
  // Each lost race means another key (of any algorithm) took the number: a few passes settle it.
  for (let attempt = 0; attempt < 5; attempt++) {
    const latest = await newest(app, alg);
    if (latest && usable(app, latest, alg)) return importPrivate(app, latest);
    const created = await createKey(app, alg, ((await newest(app))?.epoch ?? 0) + 1);
    if (created) return importPrivate(app, created);
    // Another instance made this epoch's key: read it on the next pass.
  }
  throw new Error(`no usable ${alg} signing key after five attempts`);
}

/** The key new tokens of `alg` are signed with: this instance's, while it is usable; else the newest (made when none is). */
export function signingKey(app: App, alg: JwtAlg = app.config.jwt.alg): Promise<SigningKey> | SigningKey {
  const state = stateOf(app, alg);
  if (state.current && usable(app, state.current, alg)) return state.current;
  state.refreshing ??= refresh(app, alg)
    .then((key) => (state.current = key))
    .finally(() => (state.refreshing = undefined));
  return state.refreshing;
}

/**
 * The public keys a resource server needs (RFC 7517 §5): every key whose tokens may still be
 * alive, newest first, public members only plus `kid`, `alg` and `use`. Makes the first key when
 * there is none, so a resource server started before any token was issued has a set to cache.
 */
export type PublicJwk = JWK & { kty: string; kid: string; alg: string; use: "sig" };

export async function publishedKeys(app: App): Promise<{ keys: PublicJwk[] }> {
  const uses = app.registry.keyUses.flatMap((declare) => declare(app));
  const lifetimes = new Map<string, number>([[app.config.jwt.alg, app.config.jwt.expirationTime]]);
  for (const { alg, lifetimeSec } of uses) lifetimes.set(alg, Math.max(lifetimes.get(alg) ?? 0, lifetimeSec));
  await Promise.all([...lifetimes.keys()].map((alg) => signingKey(app, alg as JwtAlg)));
  // A key of an algorithm no longer in use: kept as long as the longest lifetime of any use.
  const longest = Math.max(...lifetimes.values());
  const now = app.clock.now().getTime();
  const since = new Date(now - (longest + SKEW_SEC) * 1000);
  const rows = await app.orm.em.fork().find(JwksKey, { signsUntil: { $gt: since } }, { orderBy: { epoch: "desc" }, disableIdentityMap: true });
  const alive = (r: IJwksKey) => r.signsUntil.getTime() > now - ((lifetimes.get(r.alg) ?? longest) + SKEW_SEC) * 1000;
  // jwt.alg's keys first (what a JWT-only resource server and better-auth's JWKS show), newest first within each.
  const first = (r: IJwksKey) => (r.alg === app.config.jwt.alg ? 0 : 1);
  rows.sort((a, b) => first(a) - first(b) || b.epoch - a.epoch);
  return { keys: rows.filter(alive).map((r) => ({ ...(JSON.parse(r.publicKey) as JWK & { kty: string }), kid: r.id, alg: r.alg, use: "sig" as const })) };
}
