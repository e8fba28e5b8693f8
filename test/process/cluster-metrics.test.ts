import { request as httpRequest } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, freePort, killAll, startServerProcess } from "./harness.ts";

/**
 * `serve --workers 2`: each worker counts the requests it answered, and one scrape reports the
 * whole service, whichever worker (or the primary, on metrics.port) the scrape reaches. Every
 * request and scrape on a fresh connection, so the cluster's round robin spreads them.
 */

const databases: TestDatabase[] = [];
const configs: { remove(): void }[] = [];
afterAll(async () => {
  killAll();
  for (const c of configs) c.remove();
  await Promise.all(databases.map((d) => d.drop()));
});

function fresh(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { connection: "close", ...headers } }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** `portcullis_http_requests_total{route="/ok",status="200"}` of one scrape (0 when absent). */
async function okCount(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fresh(url, headers);
  expect(res.status, res.body).toBe(200);
  const line = res.body.split("\n").find((l) => l.startsWith('portcullis_http_requests_total{route="/ok",status="200"}'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

const TOKEN = "cluster-metrics-token-cluster-metrics-0123";

describe(`serve --workers 2 with metrics (${testDialect})`, { timeout: 120_000 }, () => {
  for (const where of ["metrics.port", "the service's port"] as const) {
    it(`on ${where}: six scrapes after 41 requests each read 41`, async () => {
      const db = await createTestDatabase();
      databases.push(db);
      const metricsPort = await freePort();
      const config = configFile({ logLevel: "info", metrics: where === "metrics.port" ? { enabled: true, port: metricsPort } : { enabled: true, token: TOKEN } });
      configs.push(config);
      const server = await startServerProcess({ databaseUrl: db.url, config: config.path, env: { PORTCULLIS_WORKERS: "2" } });
      try {
        for (let i = 0; i < 41; i++) expect((await fresh(`${server.auth}/ok`)).status).toBe(200);
        const scrapeUrl = where === "metrics.port" ? `http://127.0.0.1:${metricsPort}/metrics` : `${server.url}/metrics`;
        const auth: Record<string, string> = where === "metrics.port" ? {} : { authorization: `Bearer ${TOKEN}` };
        const counts: number[] = [];
        for (let i = 0; i < 6; i++) counts.push(await okCount(scrapeUrl, auth));
        expect(counts).toEqual([41, 41, 41, 41, 41, 41]);
        if (where === "the service's port") expect((await fresh(scrapeUrl)).status).toBe(401);
      } finally {
        await server.stop();
      }
      expect(await server.exited, server.output()).toBe(0);
      // The start says once (the primary, not each worker) where the metrics are and who may read them.
      const said = server.output().split("\n").filter((l) => /"msg":"metrics (listening|served on the service's port)"/.test(l));
      expect(said, server.output()).toEqual([
        where === "metrics.port" ? expect.stringMatching(/"access":"anyone who reaches it \(no metrics\.token\)".*"metrics listening"/) : expect.stringMatching(/"access":"Bearer token \(metrics\.token\)".*"metrics served on the service's port"/),
      ]);
    });
  }
});
