import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { createClient } from "../../src/modules/oidc-provider/clients.ts";
import { testDialect } from "../harness/database.ts";
import type { TestServer } from "../harness/server.ts";

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

/** test-output/oidc/<dialect>/, made if missing: where the OpenID pages' screenshots go. */
export function oidcShotsDir(): string {
  const dir = fileURLToPath(new URL(`../../test-output/oidc/${testDialect}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A public code + PKCE client "Grafana" registered straight in the service, answering at RP_REDIRECT. */
export async function registerPageClient(server: TestServer): Promise<string> {
  const app = server.portcullis.app;
  return (await createClient(app, app.orm.em.fork(), { name: "Grafana", redirectUris: [RP_REDIRECT], grantTypes: ["authorization_code"], authMethod: "none" })).client.clientId;
}
