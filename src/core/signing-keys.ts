import type { JWK } from "jose";
import type { App } from "../app.ts";
import { appAead } from "../crypto/app-aead.ts";
import { JwksKey, type IJwksKey } from "../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../db/mikro-orm.ts";
import { loadJose } from "./jose.ts";

/**
 * The signing keys (docs/machine-access.md "Keys"): made on first use, the private half sealed
 * at rest (AES-256-GCM with the service secrets, src/crypto/aead.ts), a new one every
 * `jwt.rotationDays` or when `jwt.alg` changes. Keys are numbered (`epoch`, unique): instances
 * that rotate at once all try to insert the next number, one wins, the others read its key.
 * A retired key stays published until every token it signed has expired.
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

const states = new WeakMap<App, KeyState>();

const aad = (kid: string) => `jwks:${kid}`;

function stateOf(app: App): KeyState {
  let state = states.get(app);
  if (!state) states.set(app, (state = {}));
  return state;
}

const usable = (app: App, key: { alg: string; signsUntil: Date }) => key.alg === app.config.jwt.alg && key.signsUntil.getTime() > app.clock.now().getTime();

async function importPrivate(app: App, row: IJwksKey): Promise<SigningKey> {
  const jose = await loadJose();
  const jwk = JSON.parse(appAead(app).decrypt(row.privateKey, aad(row.id))) as JWK;
  const privateKey = await jose.importJWK(jwk, row.alg);
  return { kid: row.id, alg: row.alg as JwtAlg, privateKey, signsUntil: row.signsUntil };
}

const newest = async (app: App) =>
  (await app.orm.em.fork().find(JwksKey, {}, { orderBy: { epoch: "desc" }, limit: 1, disableIdentityMap: true }))[0] ?? null;

/** A new key numbered `epoch`; null when another instance inserted that number first. */
async function createKey(app: App, epoch: number): Promise<IJwksKey | null> {
  const jose = await loadJose();
  const alg = app.config.jwt.alg;
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

async function refresh(app: App): Promise<SigningKey> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const latest = await newest(app);
    if (latest && usable(app, latest)) return importPrivate(app, latest);
    const created = await createKey(app, (latest?.epoch ?? 0) + 1);
    if (created) return importPrivate(app, created);
    // Another instance made this epoch's key: read it on the next pass.
  }
  throw new Error("no usable JWT signing key after three attempts");
}

/** The key new tokens are signed with: this instance's, while it is usable; else the newest (made when none is). */
export function signingKey(app: App): Promise<SigningKey> | SigningKey {
  const state = stateOf(app);
  if (state.current && usable(app, state.current)) return state.current;
  state.refreshing ??= refresh(app)
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
  await signingKey(app);
  const { expirationTime } = app.config.jwt;
  const since = new Date(app.clock.now().getTime() - (expirationTime + SKEW_SEC) * 1000);
  const rows = await app.orm.em.fork().find(JwksKey, { signsUntil: { $gt: since } }, { orderBy: { epoch: "desc" }, disableIdentityMap: true });
  return { keys: rows.map((r) => ({ ...(JSON.parse(r.publicKey) as JWK & { kty: string }), kid: r.id, alg: r.alg, use: "sig" as const })) };
}
