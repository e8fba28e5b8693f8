/**
 * MCP authorization end to end: @modelcontextprotocol/sdk's client against a small MCP server
 * guarded by `portcullis/verify` (RFC 9728 metadata, the 401 challenge, `aud` enforced), with
 * Portcullis as the authorization server: challenge → RFC 9728 → RFC 8414 → RFC 7591
 * registration → sign-in and consent → token (RFC 8707 resource) → tool call. A token minted
 * for another resource is refused.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerChallenge, createAccessTokenVerifier, protectedResourceMetadata, protectedResourceMetadataPath } from "../../../src/verify/index.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, pkce, signUp, tokenRequest } from "./helpers.ts";

let auth: TestServer;
let mcpHttp: Server;
let mcpUrl: string;

/** The MCP server of docs/oidc-provider.md "Protecting an MCP server". */
function startMcpServer(issuer: string): Promise<string> {
  let resource = "";
  const verifier = () => createAccessTokenVerifier({ resource, issuer });
  let cached: ReturnType<typeof verifier> | undefined;
  mcpHttp = createServer(async (req: IncomingMessage, res) => {
    const options = { resource, issuer, scopesSupported: ["openid", "email"] };
    if (req.method === "GET" && req.url === protectedResourceMetadataPath(resource)) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(protectedResourceMetadata(options)));
      return;
    }
    const token = req.headers.authorization?.replace(/^Bearer /i, "");
    const claims = token ? await (cached ??= verifier()).verify(token).catch(() => null) : null;
    if (!claims) {
      res.writeHead(401, { "www-authenticate": bearerChallenge(options, token ? "invalid_token" : undefined) }).end();
      return;
    }
    const server = new McpServer({ name: "portcullis-test", version: "1.0.0" });
    server.registerTool("whoami", { description: "The signed-in user" }, async () => ({ content: [{ type: "text", text: claims.sub }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  return new Promise((resolve) =>
    mcpHttp.listen(0, "127.0.0.1", () => {
      resource = `http://127.0.0.1:${(mcpHttp.address() as AddressInfo).port}/mcp`;
      resolve(resource);
    }),
  );
}

beforeAll(async () => {
  auth = await startTestServer({}, { ownOrigin: true });
  mcpUrl = await startMcpServer(auth.auth);
});
afterAll(async () => {
  await new Promise((resolve) => mcpHttp.close(resolve));
  await auth.close();
});

/** An MCP client's OAuth state, in memory; `authorizationUrl` is where it would open a browser. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationFull;
  stored?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  get redirectUrl() {
    return "http://127.0.0.1:33418/callback";
  }
  get clientMetadata() {
    return { client_name: "MCP test client", redirect_uris: [this.redirectUrl], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationFull) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe("an MCP client signs in through Portcullis", () => {
  it("challenge → metadata → registration → consent → token for this resource → tool call", async () => {
    const provider = new MemoryProvider();
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await expect(new Client({ name: "test", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toEqual(expect.any(String));
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${auth.auth}/oauth2/authorize`);
    expect(url.searchParams.get("resource")).toBe(mcpUrl);

    const browser = await signUp(auth);
    const callback = await authorizeToCallback(auth, browser, url.toString());
    expect(callback.origin + callback.pathname).toBe(provider.redirectUrl);
    await first.finishAuth(callback.searchParams.get("code")!);

    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
    const result = await client.callTool({ name: "whoami" });
    expect(result.content).toEqual([{ type: "text", text: browser.userId }]);
    await client.close();
  });

  it("refuses a token minted for another resource (no pass-through) and an opaque token", async () => {
    const browser = await signUp(auth);
    const reg = await fetch(`${auth.auth}/oauth2/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:1/cb"], token_endpoint_auth_method: "none" }),
    }).then((r) => r.json() as Promise<{ client_id: string }>);
    const minted: string[] = [];
    for (const resource of ["https://other.example.test/mcp", undefined]) {
      const p = pkce();
      const params: Record<string, string> = { response_type: "code", client_id: reg.client_id, redirect_uri: "http://127.0.0.1:1/cb", scope: "openid", code_challenge: p.challenge, code_challenge_method: "S256", ...(resource ? { resource } : {}) };
      const callback = await authorizeToCallback(auth, browser, `${auth.auth}/oauth2/authorize?${new URLSearchParams(params)}`);
      const tokens = await tokenRequest(auth, { grant_type: "authorization_code", client_id: reg.client_id, code: callback.searchParams.get("code")!, code_verifier: p.verifier, redirect_uri: "http://127.0.0.1:1/cb" });
      expect(tokens.status, tokens.text).toBe(200);
      minted.push(tokens.body.access_token);
    }
    for (const token of minted) {
      const res = await fetch(mcpUrl, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource/mcp"`);
    }
  });
});
