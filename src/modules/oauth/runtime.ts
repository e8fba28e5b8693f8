import type { App } from "../../app.ts";
import type { Aead } from "../../crypto/aead.ts";
import { appAead } from "../../crypto/app-aead.ts";
import { AuthError } from "../../errors.ts";
import { createHttpClient } from "../../http/client.ts";
import { createProviders, type OAuthProvider } from "../../social-providers/index.ts";

/**
 * What OAuth needs per instance: the provider registry (with its HTTP client and JWKS caches)
 * and the token cipher. Built on first use and kept beside the instance (a WeakMap keyed by
 * the App, so it goes with it): nothing module-wide is shared between instances.
 */
export interface OAuthRuntime {
  providers: Map<string, OAuthProvider>;
  aead: Aead;
}

const runtimes = new WeakMap<App, OAuthRuntime>();

export function oauthRuntime(app: App): OAuthRuntime {
  let runtime = runtimes.get(app);
  if (!runtime) {
    const { dispatcher, ...limits } = app.config.http;
    const http = createHttpClient(limits, dispatcher);
    runtime = {
      providers: createProviders(app.config.providers, { http, clock: app.clock }),
      aead: appAead(app),
    };
    runtimes.set(app, runtime);
  }
  return runtime;
}

/** 400 PROVIDER_NOT_FOUND for a name that is not configured (every OAuth endpoint). */
export function getProvider(app: App, name: string): OAuthProvider {
  const provider = oauthRuntime(app).providers.get(name);
  if (!provider) throw new AuthError("PROVIDER_NOT_FOUND");
  return provider;
}

/** docs/wire-contract.md §5: `{public URL}{base}/callback/{name}`, the same in the request and the exchange (RFC 6749 §4.1.3). */
export function redirectUri(app: App, providerName: string): string {
  return `${app.config.publicUrl.replace(/\/+$/, "")}${app.config.basePath}/callback/${encodeURIComponent(providerName)}`;
}
