import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "../../../rest-bridge/server.ts";
import { testDialect } from "../../harness/database.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Requests node:http's parser refuses never reach a route: the server's clientError handler still
 * answers them in the contract's JSON shape (docs/wire-contract.md §9) and closes the connection. Raw
 * sockets, since fetch cannot send malformed requests.
 */
let server: TestServer;
let port: number;
beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.close();
});

interface RawReply {
  /** Every byte the server sent before closing. */
  raw: string;
  status: number;
  headers: Record<string, string>;
  body: any;
}

function parse(raw: string): RawReply {
  const split = raw.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  const text = raw.slice(split + 4);
  return { raw, status: Number(statusLine!.split(" ")[1]), headers, body: text ? JSON.parse(text) : undefined };
}

/** Reads until the server closes the connection; fails if it keeps it open. */
function readToClose(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let raw = "";
    const timer = setTimeout(() => reject(new Error(`the server kept the connection open; got ${JSON.stringify(raw)}`)), 5000);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (raw += chunk));
    socket.on("error", () => {}); // a reset after the answer still leaves the answer read
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(raw);
    });
  });
}

/** Sends `payload` without ending our side: the server must close the connection itself. */
async function exchange(payload: string, toPort = port): Promise<RawReply> {
  const socket = connect(toPort, "127.0.0.1");
  const closed = readToClose(socket);
  socket.write(Buffer.from(payload, "latin1"));
  return parse(await closed);
}

function expectRefusal(reply: RawReply, status: number, code: string, message: string) {
  expect(reply.status, reply.raw).toBe(status);
  expect(reply.headers["content-type"]).toBe("application/json; charset=utf-8");
  expect(reply.headers.connection).toBe("close");
  expect(reply.headers["cache-control"]).toBe("no-store");
  expect(Number(reply.headers["content-length"])).toBe(Buffer.byteLength(JSON.stringify(reply.body)));
  // The exact body: nothing of the parser's own message or of the client's bytes.
  expect(reply.body).toEqual({ code, message });
}

const badRequest = (reply: RawReply) => expectRefusal(reply, 400, "BAD_REQUEST", "Bad request");
const chunked = (path: string, method = "POST") =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`;

describe(`requests the HTTP parser refuses (${testDialect})`, () => {
  it("a bad request line: 400 BAD_REQUEST in JSON, connection closed", async () => {
    badRequest(await exchange("GARBAGE\r\n\r\n"));
    badRequest(await exchange("GET /api/auth/ok HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n"));
    badRequest(await exchange("GET /api/auth/o k HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  });

  it("invalid characters in a header name or value, quoting none of them back", async () => {
    const name = await exchange("GET /api/auth/get-session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Sec\x01ret: abc\r\n\r\n");
    badRequest(name);
    const value = await exchange("GET /api/auth/get-session HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok\x00en-SECRET\r\n\r\n");
    badRequest(value);
    expect(value.raw).not.toContain("SECRET");
  });

  it("a bad chunked body, on the bridge and on tRPC, gets the one JSON answer", async () => {
    for (const [method, path] of [["POST", "/api/auth/sign-in/email"], ["POST", "/api/trpc/signIn.email"], ["GET", "/api/auth/ok"]] as const) {
      const reply = await exchange(chunked(path, method));
      badRequest(reply);
      expect(reply.raw.match(/HTTP\/1\.1 /g), path).toHaveLength(1);
    }
  });

  it("an answer already under way is never followed by a second one: the connection just closes", async () => {
    // No such route: the 404 goes out at once, before the parser reaches the bad chunk.
    const reply = await exchange(chunked("/api/auth/ok", "POST"));
    expect(reply.status, reply.raw).toBe(404);
    expect(reply.body).toEqual({ code: "NOT_FOUND", message: "Not found" });
    expect(reply.raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it("Content-Length together with Transfer-Encoding (request smuggling) is refused", async () => {
    badRequest(
      await exchange(
        "POST /api/auth/sign-in/email HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
      ),
    );
  });

  it("a request head over Node's 16 KiB limit: 431 in JSON", async () => {
    const reply = await exchange(`GET /api/auth/ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expectRefusal(reply, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE", "Request header fields too large");
  });

  it("a kept-alive connection that sends a malformed second request gets the answer, then the close", async () => {
    const socket = connect(port, "127.0.0.1");
    const first = await new Promise<string>((resolve) => {
      socket.once("data", (chunk) => resolve(chunk.toString("latin1")));
      socket.write("GET /api/auth/ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    });
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    const closed = readToClose(socket);
    socket.write("GARBAGE\r\n\r\n");
    badRequest(parse(await closed));
  });

  it("the server goes on serving", async () => {
    const res = await fetch(`${server.auth}/ok`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});

/**
 * Slow clients and broken sockets, which a test cannot provoke in reasonable time (node:http
 * checks its request timeouts every 30 s): the real handler of a server of ours, fed node's own
 * error codes on a real connection.
 */
describe(`clientError without a parser error (${testDialect})`, () => {
  let own: ReturnType<typeof createHttpServer>;
  let ownPort: number;
  beforeAll(async () => {
    own = createHttpServer(server.portcullis.app);
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    ownPort = (own.address() as AddressInfo).port;
  });
  afterAll(async () => {
    own.closeAllConnections();
    await new Promise((resolve) => own.close(resolve));
  });

  async function withError(code: string): Promise<string> {
    const accepted = new Promise<Socket>((resolve) => own.once("connection", resolve));
    const client = connect(ownPort, "127.0.0.1");
    const closed = readToClose(client);
    const socket = await accepted;
    own.emit("clientError", Object.assign(new Error(`simulated ${code}`), { code }), socket);
    return closed;
  }

  it("a request that came too slowly: 408 in JSON", async () => {
    expectRefusal(parse(await withError("ERR_HTTP_REQUEST_TIMEOUT")), 408, "REQUEST_TIMEOUT", "Request timeout");
  });

  it("a socket failure (ECONNRESET, EPIPE) is only closed: nothing written", async () => {
    expect(await withError("ECONNRESET")).toBe("");
    expect(await withError("EPIPE")).toBe("");
  });
});
