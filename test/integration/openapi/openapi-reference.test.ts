import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { get, post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * `{base}/reference`: Scalar's renderer, served by us from the installed package (never a CDN),
 * reading `{base}/openapi.json`. Also under another base path, where both move with it.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ basePath: "/auth" });
});
afterAll(async () => {
  await server?.close();
});

const sha256 = (b: Buffer | Uint8Array) => createHash("sha256").update(b).digest("hex");

/** What the service should serve as the renderer: the build's copy when there is one, else the package's bundle. */
function rendererFile(): string {
  const copy = join(import.meta.dirname, "../../../dist/vendor/scalar-api-reference.js");
  return existsSync(copy) ? copy : createRequire(import.meta.url).resolve("@scalar/api-reference/browser/standalone.js");
}

/** A raw GET (fetch would undo the gzip): status, headers, body bytes as sent. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on("error", reject)
      .end();
  });
}

describe(`the API reference (${testDialect})`, () => {
  it("is a page that loads our own copy of the renderer and our document, under a strict CSP", async () => {
    const res = await get(`${server.auth}/reference`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.text).toContain('<script src="/auth/reference/scalar.js"></script>');
    expect(res.text).toContain("&quot;url&quot;:&quot;/auth/openapi.json&quot;");
    expect(res.text).toContain("&quot;withDefaultFonts&quot;:false");
    // Nothing from elsewhere: no absolute URL in the page, and the CSP allows our origin only.
    expect(res.text).not.toMatch(/(https?:)?\/\/[a-z]/i);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toMatch(/https?:\/\/(?!127\.0\.0\.1:3000\b)/);
    expect(csp).not.toContain("unsafe-eval");
  });

  it("serves the renderer's bundle byte for byte, as JavaScript, gzipped when asked", async () => {
    const expected = readFileSync(rendererFile());
    const plain = await rawGet(`${server.auth}/reference/scalar.js`, {});
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(sha256(plain.body)).toBe(sha256(expected));
    const gz = await rawGet(`${server.auth}/reference/scalar.js`, { "accept-encoding": "gzip, deflate" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.body.length).toBeLessThan(expected.length / 2);
    expect(sha256(gunzipSync(gz.body))).toBe(sha256(expected));
    expect(expected.toString("utf8", 0, 4096 * 1024)).toContain("@scalar/api-reference");
  });

  it("serves the document under the base path; HEAD has no body, other methods are 404 like any unknown route", async () => {
    const doc = await get(`${server.auth}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(doc.body.servers).toEqual([{ url: "http://127.0.0.1:3000/auth" }]);
    const head = await request("HEAD", `${server.auth}/openapi.json`, { headers: { "accept-encoding": "identity" } });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(Number(head.headers.get("content-length"))).toBe(Buffer.byteLength(doc.text));
    const posted = await post(`${server.auth}/openapi.json`, {});
    expect(posted.status).toBe(404);
    expect(posted.body.code).toBe("NOT_FOUND");
    expect((await get(`${server.url}/api/auth/openapi.json`)).status).toBe(404); // the default base path is not ours here
  });
});
