import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportersFromEnv } from "../../../src/tracing/index.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Tracing (docs/operations.md "Tracing"): with an exporter, each request is a SERVER span (method,
 * route, status), each procedure a child span (with the user's id once known, the error code of a
 * refusal), each database statement a child of the procedure (or of the request on get-session's
 * path); no attribute ever holds a token, a password or a path's token. Off by default: no
 * exporter named, no tracing object, nothing of the SDK loaded by the service.
 */

let server: TestServer;
let plain: TestServer;
const exporter = new InMemorySpanExporter();
const PASSWORD = "tracing-password-1";

beforeAll(async () => {
  server = await startTestServer({}, { tracing: { exporter, simple: true } });
  plain = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await plain?.close();
});

const spans = () => exporter.getFinishedSpans();
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const childrenOf = (parent: ReadableSpan) => spans().filter((s) => parentOf(s) === parent.spanContext().spanId);
/** The request span ends once the answer is gone and the handler is done. */
async function settle() {
  await new Promise((r) => setTimeout(r, 50)); // the request span ends on the response's close
}

describe(`tracing (${testDialect})`, () => {
  it("is off unless OTEL_TRACES_EXPORTER names an exporter", () => {
    expect(plain.portcullis.app.tracing).toBeUndefined();
    expect(exportersFromEnv({})).toEqual([]);
    expect(exportersFromEnv({ OTEL_TRACES_EXPORTER: "none" })).toEqual([]);
    expect(exportersFromEnv({ OTEL_TRACES_EXPORTER: "otlp, Console" })).toEqual(["otlp", "console"]);
    expect(server.portcullis.app.tracing).toBeDefined();
  });

  it("request → procedure → database, with route, status and user id; never a token or password", async () => {
    const email = uniqueEmail("trace");
    const up = await post(`${server.auth}/sign-up/email`, { name: "T", email, password: PASSWORD });
    expect(up.status, up.text).toBe(200);
    exporter.reset();
    const signIn = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    const token = signIn.body.token as string;
    const userId = signIn.body.user.id as string;
    await settle();

    const requestSpan = spans().find((s) => s.attributes["http.route"] === "/sign-in/email")!;
    expect(requestSpan).toBeDefined();
    expect(requestSpan.name).toBe("POST /sign-in/email");
    expect(requestSpan.kind).toBe(1); // SERVER
    expect(requestSpan.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200 });
    expect(parentOf(requestSpan)).toBeUndefined();
    const [procedure] = childrenOf(requestSpan);
    expect(procedure?.name).toBe("mutation signIn.email");
    expect(procedure?.attributes).toMatchObject({ "rpc.system": "trpc", "rpc.method": "signIn.email", "enduser.id": userId });
    const db = childrenOf(procedure!);
    // the credential look-up, the session insert and the sign-in's audit record (session store: prepared statements)
    expect(db.map((s) => s.name)).toEqual(expect.arrayContaining(["db findCredential", "db insertSessionUnlessBanned", "db insertAudit"]));
    for (const s of db) expect(s.attributes["db.system.name"]).toBe(testDialect === "sqlite" ? "sqlite" : "postgresql");
    expect(db.every((s) => s.spanContext().traceId === requestSpan.spanContext().traceId)).toBe(true);

    // a tRPC call through the ORM: its SQL statements are the procedure's children, values never in them
    exporter.reset();
    const listed = await request("GET", `${server.url}/api/trpc/listSessions`, { bearer: token });
    expect(listed.status, listed.text).toBe(200);
    await settle();
    const trpcRequest = spans().find((s) => s.attributes["http.route"] === "trpc")!;
    const listProcedure = childrenOf(trpcRequest).find((s) => s.name === "query listSessions")!;
    expect(listProcedure.attributes["enduser.id"]).toBe(userId);
    const sql = childrenOf(listProcedure).filter((s) => s.attributes["db.query.text"]);
    expect(sql.length).toBeGreaterThan(0);
    expect(sql.some((s) => s.attributes["db.collection.name"] === "sessions")).toBe(true);

    // get-session's fast path: the request span and its look-up
    exporter.reset();
    server.portcullis.app.sessionCache.clear();
    expect((await get(`${server.auth}/get-session`, { bearer: token })).status).toBe(200);
    await settle();
    const gs = spans().find((s) => s.attributes["http.route"] === "/get-session")!;
    expect(gs.attributes["http.response.status_code"]).toBe(200);
    expect(childrenOf(gs).map((s) => s.name)).toContain("db findByTokenHash");

    // a refusal: the procedure names the code; a reset link's token in a 404 path stays out
    exporter.reset();
    expect((await post(`${server.auth}/sign-in/email`, { email, password: "wrong-password-1" })).status).toBe(401);
    const resetToken = "aB3dE5gH7jK9mN1pQ3sT5vX7";
    expect((await get(`${server.url}/nowhere/${resetToken}?token=${resetToken}`)).status).toBe(404);
    await settle();
    const failed = spans().find((s) => s.name === "mutation signIn.email")!;
    expect(failed.attributes["portcullis.error_code"]).toBe("INVALID_EMAIL_OR_PASSWORD");
    const notFound = spans().find((s) => s.attributes["http.route"] === "unmatched")!;
    expect(notFound.attributes["http.response.status_code"]).toBe(404);

    const everything = JSON.stringify(spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    for (const secret of [token, PASSWORD, "wrong-password-1", resetToken, signIn.headers.get("set-auth-token")!]) expect(everything).not.toContain(secret);
  });
});
