import type { Browser, Page } from "playwright-core";

/** The relying party of the OpenID provider's page tests: its callback is intercepted, only its URL matters. */
export const RP_REDIRECT = "https://rp.example.test/callback";

/** A fresh browser profile; `problems` collects page errors and console errors (a CSP violation is one). */
export async function openPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  await context.route("https://rp.example.test/**", (route) => route.fulfill({ status: 200, contentType: "text/plain", body: "relying party" }));
  return { page, problems };
}

/** A code + PKCE authorize request for `openid email`, state `xyz`, at `auth` (`{origin}{base}`). */
export function pageAuthorizeUrl(auth: string, clientId: string): string {
  const params = new URLSearchParams({
    response_type: "code", client_id: clientId, redirect_uri: RP_REDIRECT, scope: "openid email", state: "xyz",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256",
  });
  return `${auth}/oauth2/authorize?${params}`;
}
