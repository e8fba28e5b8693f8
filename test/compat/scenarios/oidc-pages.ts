/**
 * The OpenID provider with the app's own sign-in and consent pages (`oidcProvider.loginPage` /
 * `consentPage`, better-auth's oauth-provider `loginPage` / `consentPage`; both targets point at
 * targets.ts APP_PAGES). The authorize request reaches a page as its signed query; on the page,
 * oauthProviderClient finds that query in `window.location.search` and adds it to the page's
 * POSTs as `oauth_query` (sign-in, then `POST /oauth2/consent`). A minimal `window` stands in for
 * the page while its calls run (onPage), the same on both servers.
 */
import type { Actor } from "../actor.ts";
import { PASSWORD, type Run, type Scenario } from "../runner.ts";
import { signUp } from "./helpers.ts";

const REDIRECT = "https://rp.example.test/callback";
/** RFC 7636 appendix B's verifier and its S256 challenge. */
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/**
 * The app's page at `url` open in the browser while `fn` runs: `window.location` as
 * oauthProviderClient reads it (`search`) and as better-auth's client redirect plugin follows a
 * `{ redirect: true, url }` answer (`href`). Returns `fn`'s result and where the page sent the browser.
 */
async function onPage<T>(url: string, fn: () => Promise<T>): Promise<{ result: T; navigatedTo: string | null }> {
  const location = { href: url, search: new URL(url).search };
  const g = globalThis as { window?: unknown };
  const before = g.window;
  g.window = { location };
  try {
    const result = await fn();
    return { result, navigatedTo: location.href === url ? null : location.href };
  } finally {
    if (before === undefined) delete g.window;
    else g.window = before;
  }
}

/** The signed query's own parameters (its signature, times, the list of what it signs; Portcullis's session digest). */
const SIGNATURE_PARAMS = new Set(["sig", "exp", "ba_iat", "ba_param", "ba_pl", "pc_iat", "pc_sid"]);

/**
 * An address as the browser reaches it. An app's page with a signed query: the page, the
 * authorize request it carries, which of those parameters the query signs (`ba_param`: what
 * oauthProviderClient sends back), and the names of the signature's own parameters (each
 * server's bookkeeping). Any other address as it is.
 */
function address(url: string | null): unknown {
  if (url === null) return null;
  const u = new URL(url);
  if (!u.searchParams.has("sig")) return url;
  const request: Record<string, string> = {};
  for (const [k, v] of u.searchParams) if (!SIGNATURE_PARAMS.has(k)) request[k] = v;
  return {
    page: `${u.origin}${u.pathname}`,
    request,
    signs: u.searchParams.getAll("ba_param").filter((k) => !SIGNATURE_PARAMS.has(k)),
    signature: [...new Set([...u.searchParams.keys()].filter((k) => SIGNATURE_PARAMS.has(k)))].sort().join(" "),
  };
}

/** The next page a `{ redirect: true, url }` answer sends the browser to. */
const nextUrl = (data: unknown): string | null => {
  const url = (data as { url?: unknown } | null)?.url;
  return typeof url === "string" ? url : null;
};

interface AtConsent {
  browser: Actor;
  clientId: string;
  consentPage: string;
}

/** A developer's public client, then the authorize link in a fresh browser: returns the sign-in page it reaches. */
async function toSignInPage(s: Run): Promise<{ browser: Actor; clientId: string; signInPage: string; email: string }> {
  const dev = await signUp(s, "dev");
  const created = await s.call("create-client", dev.actor, (c) =>
    c.$fetch<{ client_id: string }>("/oauth2/create-client", { method: "POST", body: { redirect_uris: [REDIRECT], client_name: "RP", token_endpoint_auth_method: "none" } }),
  );
  const clientId = s.need(created?.client_id, "client_id");
  const alice = await signUp(s, "alice");
  const browser = s.actor("browser");
  const query = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid email", state: "st4te",
    code_challenge: CHALLENGE, code_challenge_method: "S256",
  });
  const toPage = await s.browse("authorize: to the app's sign-in page", browser, `/api/auth/oauth2/authorize?${query}`);
  const signInPage = s.need(toPage.location ?? nextUrl(toPage.json), "the sign-in page's URL");
  s.note("the sign-in page's address", address(signInPage));
  return { browser, clientId, signInPage, email: alice.email };
}

/** On the app's sign-in page, alice signs in (oauthProviderClient adds the page's oauth_query): returns the consent page it continues to. */
async function toConsentPage(s: Run): Promise<AtConsent> {
  const { browser, clientId, signInPage, email } = await toSignInPage(s);
  const signIn = await onPage(signInPage, () => s.call("sign-in/email on the sign-in page", browser, (c) => c.signIn.email({ email, password: PASSWORD })));
  s.note("the sign-in page sends the browser to", address(signIn.navigatedTo));
  return { browser, clientId, consentPage: s.need(nextUrl(signIn.result), "the consent page's URL") };
}

/** The page's query with one authorize parameter changed, its signature kept. */
function tampered(url: string, key: string, value: string): string {
  const out = new URL(url);
  out.searchParams.set(key, value);
  return out.toString();
}

export const oidcPages: Scenario[] = [
  {
    name: "oidc-provider pages: the app's sign-in and consent pages, then the code at the token endpoint",
    async run(s) {
      const { browser, clientId, consentPage } = await toConsentPage(s);
      const consent = await onPage(consentPage, () => s.call("consent: allow", browser, (c) => c.oauth2.consent({ accept: true })));
      s.note("the consent page sends the browser to", address(consent.navigatedTo));
      const back = new URL(s.need(nextUrl(consent.result), "the client's redirect"));
      const code = s.need(back.searchParams.get("code"), "code");
      const rp = s.actor("rp");
      const form = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: VERIFIER, client_id: clientId };
      const exchange = (step: string) =>
        s.call(step, rp, (c) =>
          c.$fetch("/oauth2/token", { method: "POST", body: new URLSearchParams(form), headers: { "content-type": "application/x-www-form-urlencoded" } }),
        );
      await exchange("token: the code");
      await exchange("token: the code again");
    },
  },
  {
    name: "oidc-provider pages: the user denies on the app's consent page",
    async run(s) {
      const { browser, consentPage } = await toConsentPage(s);
      const consent = await onPage(consentPage, () => s.call("consent: deny", browser, (c) => c.oauth2.consent({ accept: false })));
      s.note("the consent page sends the browser to", address(consent.navigatedTo));
    },
  },
  {
    name: "oidc-provider pages: a tampered oauth_query is refused",
    async run(s) {
      const { browser, signInPage, email } = await toSignInPage(s);
      const forged = tampered(signInPage, "redirect_uri", "https://evil.example/cb");
      await onPage(forged, () => s.call("sign-in/email with a tampered oauth_query", browser, (c) => c.signIn.email({ email, password: PASSWORD })));
      await s.call("get-session after the refused sign-in", browser, (c) => c.getSession());
      const signIn = await onPage(signInPage, () => s.call("sign-in/email with the page's oauth_query", browser, (c) => c.signIn.email({ email, password: PASSWORD })));
      const consentPage = s.need(nextUrl(signIn.result), "the consent page's URL");
      await onPage(tampered(consentPage, "scope", "openid email offline_access"), () =>
        s.call("consent with a tampered oauth_query", browser, (c) => c.oauth2.consent({ accept: true })),
      );
      await s.call("get-consents after the refused consent", browser, (c) => c.$fetch("/oauth2/get-consents"));
    },
  },
];
