import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MockAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { basicAuth, createHttpClient, HttpError, request } from "./client.ts";

const LIMITS = { connectTimeoutMs: 1000, headersTimeoutMs: 300, bodyTimeoutMs: 300, maxResponseBytes: 1024 };
const shape = z.object({ ok: z.literal(true) });

let server: Server;
let base: string;
const hits: string[] = [];
let lastBody = "";
let lastHeaders: IncomingMessage["headers"] = {};

function route(req: IncomingMessage, res: ServerResponse) {
  hits.push(req.url ?? "");
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    lastBody = Buffer.concat(chunks).toString();
    lastHeaders = req.headers;
    const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    switch (new URL(req.url ?? "/", "http://x").pathname) {
      case "/ok":
        return json(200, { ok: true, extra: "ignored" });
      case "/redirect":
        return res.writeHead(302, { location: `${base}/ok` }).end();
      case "/error":
        return json(400, { error: "invalid_grant", error_description: "PKCE verification failed" });
      case "/boom":
        return res.writeHead(500, { "content-type": "text/plain" }).end("internal stack trace");
      case "/big-declared":
        return json(200, { ok: true, pad: "x".repeat(4096) });
      case "/big-chunked":
        res.writeHead(200, { "content-type": "application/json" });
        for (let i = 0; i < 8; i++) res.write("x".repeat(512));
        return res.end();
      case "/not-json":
        return res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
      case "/wrong-shape":
        return json(200, { ok: "yes", secret: "do-not-echo-me" });
      case "/stall-headers":
        return; // never answers
      case "/stall-body":
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        return res.write('{"ok":');
      default:
        return json(404, {});
    }
  });
}

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const http = createHttpClient(LIMITS);

async function failure(path: string): Promise<HttpError> {
  const err = await request(http, { method: "GET", url: `${base}${path}?code=SECRET_CODE`, schema: shape }).then(
    () => new Error("resolved"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HttpError);
  const httpErr = err as HttpError;
  // The query string (codes, tokens) never reaches the message.
  expect(httpErr.message).not.toContain("SECRET_CODE");
  expect(httpErr.target).toBe(`GET ${base}${path}`);
  return httpErr;
}

describe("outgoing HTTP", () => {
  it("parses a JSON body with the schema and sends form bodies", async () => {
    const body = await request(http, {
      method: "POST",
      url: `${base}/ok`,
      form: { grant_type: "authorization_code", code: "a b&c" },
      headers: { authorization: basicAuth("client id", "s3cr:t/+") },
      schema: shape,
    });
    expect(body).toEqual({ ok: true });
    expect(lastHeaders["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(lastHeaders.accept).toBe("application/json");
    expect(new URLSearchParams(lastBody).get("code")).toBe("a b&c");
    // RFC 6749 §2.3.1: each part form-encoded before base64.
    expect(Buffer.from(lastHeaders.authorization!.slice(6), "base64").toString()).toBe("client+id:s3cr%3At%2F%2B");
  });

  it("follows no redirect", async () => {
    const before = hits.filter((h) => h.startsWith("/ok")).length;
    const err = await failure("/redirect");
    expect(err.kind).toBe("redirect");
    expect(err.status).toBe(302);
    expect(hits.filter((h) => h.startsWith("/ok")).length).toBe(before);
  });

  it("fails on an error status, keeping only the RFC 6749 §5.2 fields", async () => {
    const err = await failure("/error");
    expect(err).toMatchObject({ kind: "status", status: 400, oauthError: { error: "invalid_grant", description: "PKCE verification failed" } });
    const boom = await failure("/boom");
    expect(boom).toMatchObject({ kind: "status", status: 500, oauthError: null });
    expect(boom.message).not.toContain("stack trace");
  });

  it("caps the response size, declared or streamed", async () => {
    expect((await failure("/big-declared")).kind).toBe("too-large");
    expect((await failure("/big-chunked")).kind).toBe("too-large");
  });

  it("rejects a body that is not JSON or does not match, without echoing it", async () => {
    expect((await failure("/not-json")).kind).toBe("invalid-body");
    const wrong = await failure("/wrong-shape");
    expect(wrong.kind).toBe("invalid-body");
    expect(String((wrong.cause as Error).message)).toMatch(/ok/);
    expect(String((wrong.cause as Error).message)).not.toContain("do-not-echo-me");
  });

  it("times out waiting for headers, and for the body", async () => {
    const started = Date.now();
    expect((await failure("/stall-headers")).kind).toBe("timeout");
    expect((await failure("/stall-body")).kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("fails as a network error when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await request(http, { method: "GET", url: `http://127.0.0.1:${port}/x`, schema: shape }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "network" });
  });

  it("uses an injected dispatcher", async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.get("https://provider.test").intercept({ path: "/userinfo", method: "GET" }).reply(200, { ok: true });
    const mocked = createHttpClient(LIMITS, agent);
    expect(await request(mocked, { method: "GET", url: "https://provider.test/userinfo", schema: shape })).toEqual({ ok: true });
    await agent.close();
  });
});
