import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { guardedGetJson, isPublicAddress, registrableUriProblem, urlProblem, type Resolver } from "./guarded-fetch.ts";

const shape = z.object({ ok: z.literal(true) });
let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    if (req.url === "/redirect") return res.writeHead(302, { location: "/ok" }).end();
    if (req.url === "/slow") return;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("isPublicAddress", () => {
  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "2a00:1450:4001::200e", "2002:808:808::1"])("%s is public", (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
  it.each([
    "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.0.1", "169.254.169.254", "100.64.0.1", "100.127.255.254",
    "0.0.0.0", "224.0.0.251", "239.255.255.250", "255.255.255.255", "192.0.2.1", "198.18.0.1",
    "::", "::1", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:8.8.8.8",
    "64:ff9b::a00:1", "2002:7f00:1::", "2002:a00:1::", "2001:db8::1", "not an ip", "",
  ])("%s is not", (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });
});

describe("urlProblem and registrableUriProblem", () => {
  const closed = { allowPrivate: false };
  it("wants https, no credentials, no fragment, no private literal or localhost name", () => {
    expect(urlProblem("https://keys.example.com/jwks", closed)).toBeNull();
    expect(urlProblem("http://keys.example.com/jwks", closed)).toBe("must be an https URL");
    expect(urlProblem("https://u:p@keys.example.com/jwks", closed)).toBe("must not carry credentials");
    expect(urlProblem("https://keys.example.com/jwks#x", closed)).toBe("must not have a fragment");
    for (const uri of ["https://127.0.0.1/", "https://[::1]/", "https://0x7f000001/", "https://2130706433/", "https://localhost/", "https://a.localhost./"]) {
      expect(urlProblem(uri, closed), uri).toBe("must not point at a private or loopback address");
    }
    expect(urlProblem("http://127.0.0.1/jwks", { allowPrivate: true })).toBeNull();
  });
  it("resolves the name at registration, and lets a name that does not resolve yet through", async () => {
    expect(await registrableUriProblem("https://localhost.localdomain.invalid/jwks", closed)).toBeNull();
  });
});

describe("guardedGetJson", () => {
  it("connects to the address it checked, not to what the name resolves to later (no DNS rebinding)", async () => {
    // `rebind.invalid` never resolves through the system: only the pinned address can be reached.
    const resolve: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
    expect(await guardedGetJson(`http://rebind.invalid:${port}/ok`, shape, { allowPrivate: true, resolve })).toEqual({ ok: true });
  });

  it("refuses before connecting when any address of the name is private", async () => {
    const before = hits.length;
    const resolve: Resolver = async () => [{ address: "93.184.216.34", family: 4 }, { address: "127.0.0.1", family: 4 }];
    await expect(guardedGetJson(`https://keys.example.com:${port}/ok`, shape, { allowPrivate: false, resolve })).rejects.toThrow(/private or loopback/);
    await expect(guardedGetJson(`http://127.0.0.1:${port}/ok`, shape, { allowPrivate: false })).rejects.toThrow(/https/);
    expect(hits.length).toBe(before);
  });

  it("follows no redirect and keeps one deadline", async () => {
    await expect(guardedGetJson(`http://127.0.0.1:${port}/redirect`, shape, { allowPrivate: true })).rejects.toThrow(/redirect/);
    expect(hits.filter((h) => h === "/ok").length).toBe(1);
    const started = Date.now();
    await expect(guardedGetJson(`http://127.0.0.1:${port}/slow`, shape, { allowPrivate: true, timeoutMs: 300 })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
