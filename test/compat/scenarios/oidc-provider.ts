/** The OpenID provider's client and consent endpoints (docs/oidc-provider.md), driven with oauthProviderClient. */
import type { Scenario } from "../runner.ts";
import { PASSWORD } from "../runner.ts";

const REDIRECT = "https://rp.example.test/callback";

export const oidcProvider: Scenario[] = [
  {
    name: "oidc-provider: a user's clients and consents",
    async run(s) {
      const a = s.actor("a");
      await s.call("sign up", a, (c) => c.signUp.email({ name: "O", email: s.email("oidc"), password: PASSWORD }));
      const created = await s.call("create-client", a, (c) =>
        c.$fetch<{ client_id: string }>("/oauth2/create-client", { method: "POST", body: { redirect_uris: [REDIRECT], client_name: "RP", token_endpoint_auth_method: "client_secret_basic" } }),
      );
      const clientId = created?.client_id ?? "none";
      await s.call("get-client", a, (c) => c.$fetch("/oauth2/get-client", { query: { client_id: clientId } }));
      await s.call("get-clients", a, (c) => c.$fetch("/oauth2/get-clients"));
      await s.call("public-client", a, (c) => c.$fetch("/oauth2/public-client", { query: { client_id: clientId } }));
      await s.call("update-client", a, (c) => c.$fetch("/oauth2/update-client", { method: "POST", body: { client_id: clientId, update: { client_name: "Renamed" } } }));
      await s.call("get-consents", a, (c) => c.$fetch("/oauth2/get-consents"));
      await s.call("delete-client", a, (c) => c.$fetch("/oauth2/delete-client", { method: "POST", body: { client_id: clientId } }));
      await s.call("create-client without redirect_uris", a, (c) => c.$fetch("/oauth2/create-client", { method: "POST", body: { client_name: "RP" } }));
      const anonymous = s.actor("anonymous");
      await s.call("get-clients without a session", anonymous, (c) => c.$fetch("/oauth2/get-clients"));
    },
  },
  {
    name: "oidc-provider: the authorization request of a signed-in user",
    async run(s) {
      const a = s.actor("a");
      await s.call("sign up", a, (c) => c.signUp.email({ name: "O", email: s.email("oidc-flow"), password: PASSWORD }));
      const created = await s.call("create-client", a, (c) =>
        c.$fetch<{ client_id: string }>("/oauth2/create-client", { method: "POST", body: { redirect_uris: [REDIRECT], client_name: "RP", token_endpoint_auth_method: "none" } }),
      );
      const query = new URLSearchParams({
        response_type: "code", client_id: created?.client_id ?? "none", redirect_uri: REDIRECT, scope: "openid email", state: "st4te",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256",
      });
      await s.browse("authorize: to the consent page", a, `/api/auth/oauth2/authorize?${query}`);
      await s.call("authorize as a fetch: JSON", a, (c) => c.$fetch("/oauth2/authorize", { query: Object.fromEntries(query) }));
      query.set("redirect_uri", "https://evil.example/cb");
      await s.browse("authorize: an unregistered redirect_uri", a, `/api/auth/oauth2/authorize?${query}`);
    },
  },
];
