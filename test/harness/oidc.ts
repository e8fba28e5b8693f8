import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

/**
 * A real OpenID provider (panva's oidc-provider) on 127.0.0.1: it issues codes, enforces PKCE
 * (S256, required for every client) and the registered client authentication method, signs
 * id_tokens with its own RSA key, and serves userinfo. Its login and consent pages are replaced
 * by one route, POST /interaction/:uid, that a test drives over plain HTTP: it logs in the
 * account named in the form (or denies), and grants whatever the client asked for.
 */

export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string | null;
}

export interface OidcClient {
  clientId: string;
  clientSecret: string;
}

export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  /** RFC 9207 §3: oidc-provider 8 names itself in `iss` on every authorization response. */
  authorization_response_iss_parameter_supported?: boolean;
}

/** Where the provider sent the browser back: a redirect, or a form_post page. */
export type AuthorizationOutcome = { kind: "redirect"; location: string } | { kind: "form_post"; action: string; fields: Record<string, string> };

export interface TestOidcProvider {
  issuer: string;
  discovery: Discovery;
  /** client_secret_basic client. */
  basicClient: OidcClient;
  /** client_secret_post client (the google built-in authenticates this way). */
  postClient: OidcClient;
  /** Adds or replaces an account: its claims are what userinfo and id_tokens say. */
  setAccount(account: OidcAccount): void;
  /** Plays the browser: follows the authorization URL, logs `sub` in (or denies), consents. */
  authorize(authorizationUrl: string, as: { sub: string } | { deny: true }): Promise<AuthorizationOutcome>;
  /**
   * Plays a native app that signs `sub` in at the provider on its own (code flow with PKCE to
   * NATIVE_REDIRECT_URI, optional OIDC nonce) and holds the real tokens it was issued.
   */
  nativeTokens(client: OidcClient, sub: string, opts?: { nonce?: string }): Promise<NativeTokens>;
  close(): Promise<void>;
}

export interface NativeTokens {
  idToken: string;
  accessToken: string;
  refreshToken: string | null;
}

/** Registered for both clients: where a native app's own authorization requests return. */
export const NATIVE_REDIRECT_URI = "http://127.0.0.1:3000/native-app/callback";

export interface OidcOptions {
  /** Redirect URIs registered for both clients. */
  redirectUris: string[];
  accessTokenTtlSec?: number;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** oidc-provider's storage interface over a Map: one per provider, gone with it. */
function memoryAdapter() {
  const store = new Map<string, { payload: Record<string, unknown>; expiresAtMs: number }>();
  const live = (key: string) => {
    const hit = store.get(key);
    if (hit && hit.expiresAtMs <= Date.now()) store.delete(key);
    return store.get(key)?.payload;
  };
  return class MemoryAdapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>, expiresIn: number) {
      store.set(this.key(id), { payload, expiresAtMs: Date.now() + (expiresIn || 3600) * 1000 });
    }
    async find(id: string) {
      return live(this.key(id));
    }
    async findByUid(uid: string) {
      return [...store.keys()].filter((k) => k.startsWith(`${this.model}:`)).map(live).find((p) => p?.uid === uid);
    }
    async findByUserCode(userCode: string) {
      return [...store.keys()].filter((k) => k.startsWith(`${this.model}:`)).map(live).find((p) => p?.userCode === userCode);
    }
    async consume(id: string) {
      const payload = live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, { payload }] of store) if (payload.grantId === grantId) store.delete(key);
    }
  };
}

class CookieJar {
  private cookies = new Map<string, string>();
  store(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

function decodeHtml(value: string): string {
  return value.replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16))).replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

export async function startOidcProvider(options: OidcOptions): Promise<TestOidcProvider> {
  let handler: ((req: IncomingMessage, res: import("node:http").ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: "test-signing-key", alg: "RS256", use: "sig" };
  const accounts = new Map<string, OidcAccount>();
  const basicClient = { clientId: "portcullis-basic", clientSecret: "basic-client-secret-0123456789" };
  const postClient = { clientId: "portcullis-post", clientSecret: "post-client-secret-0123456789" };
  const client = (c: OidcClient, method: string) => ({
    client_id: c.clientId,
    client_secret: c.clientSecret,
    redirect_uris: [...options.redirectUris, NATIVE_REDIRECT_URI],
    response_types: ["code"],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: method,
  });

  const provider = new Provider(issuer, {
    clients: [client(basicClient, "client_secret_basic"), client(postClient, "client_secret_post")],
    jwks: { keys: [signingKey] },
    cookies: { keys: ["oidc-test-cookie-key-0123456789"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "picture"] },
    // One scope beyond OpenID's, for tests that ask for more than the defaults.
    scopes: ["openid", "offline_access", "api:read"],
    // Like Google: the id_token carries the scope claims too, not only userinfo.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false }, userinfo: { enabled: true } },
    pkce: { methods: ["S256"], required: () => true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async (_ctx: unknown, c: { grantTypeAllowed(t: string): boolean }) => c.grantTypeAllowed("refresh_token"),
    adapter: memoryAdapter(),
    ttl: {
      AccessToken: options.accessTokenTtlSec ?? 3600,
      AuthorizationCode: 60,
      // Long enough for tests that move the injected clock ahead of the provider's real one.
      IdToken: 24 * 3600,
      RefreshToken: 14 * 24 * 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 14 * 24 * 3600,
    },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  } as never);

  // The test's login and consent "pages".
  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!match || ctx.method !== "POST") return next();
    const form = await readForm(ctx.req);
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result: Record<string, unknown>;
    if (form.get("deny")) {
      result = { error: "access_denied", error_description: "End-User denied the request" };
    } else if (details.prompt.name === "login") {
      result = { login: { accountId: form.get("sub") } };
    } else {
      const { missingOIDCScope, missingOIDCClaims } = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      const grant = details.grantId
        ? (await provider.Grant.find(details.grantId))!
        : new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(" "));
      if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
      result = { consent: { grantId: await grant.save() } };
    }
    ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
  });
  handler = provider.callback();

  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Discovery;

  const self: TestOidcProvider = {
    issuer,
    discovery,
    basicClient,
    postClient,
    setAccount(account) {
      accounts.set(account.sub, account);
    },
    async authorize(authorizationUrl, as) {
      const jar = new CookieJar();
      let url = authorizationUrl;
      let method = "GET";
      for (let hop = 0; hop < 10; hop++) {
        const body = method === "POST" ? new URLSearchParams("deny" in as ? { deny: "1" } : { sub: as.sub }).toString() : undefined;
        const res = await fetch(url, {
          method,
          redirect: "manual",
          headers: { cookie: jar.header(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
          body,
        });
        jar.store(res.headers);
        const text = await res.text();
        if (res.status === 200 && /<form[^>]+method="post"/i.test(text)) {
          const action = decodeHtml(/<form[^>]+action="([^"]+)"/i.exec(text)![1]!);
          const fields = Object.fromEntries([...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, decodeHtml(m[2]!)]));
          return { kind: "form_post", action, fields };
        }
        const location = res.headers.get("location");
        if (res.status < 300 || res.status >= 400 || !location) throw new Error(`provider answered ${res.status}: ${text.slice(0, 300)}`);
        const next = new URL(location, url).toString();
        if (!next.startsWith(`${issuer}/`)) return { kind: "redirect", location: next };
        url = next;
        method = next.startsWith(`${issuer}/interaction/`) ? "POST" : "GET";
      }
      throw new Error("too many redirects at the provider");
    },
    async nativeTokens(c, sub, opts = {}) {
      const verifier = randomBytes(32).toString("base64url");
      const url = new URL(discovery.authorization_endpoint);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: c.clientId,
        redirect_uri: NATIVE_REDIRECT_URI,
        scope: "openid email profile",
        state: randomBytes(16).toString("base64url"),
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        ...(opts.nonce ? { nonce: opts.nonce } : {}),
      }).toString();
      const outcome = await self.authorize(url.toString(), { sub });
      const code = outcome.kind === "redirect" ? new URL(outcome.location).searchParams.get("code") : null;
      if (!code) throw new Error("no code for the native app");
      const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: NATIVE_REDIRECT_URI, code_verifier: verifier };
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      // Each client authenticates the way it was registered.
      if (c.clientId === basicClient.clientId) headers.authorization = `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;
      else Object.assign(form, { client_id: c.clientId, client_secret: c.clientSecret });
      const res = await fetch(discovery.token_endpoint, { method: "POST", headers, body: new URLSearchParams(form) });
      const body = (await res.json()) as { id_token?: string; access_token?: string; refresh_token?: string };
      if (!res.ok || !body.id_token || !body.access_token) throw new Error(`token endpoint answered ${res.status}`);
      return { idToken: body.id_token, accessToken: body.access_token, refreshToken: body.refresh_token ?? null };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return self;
}
