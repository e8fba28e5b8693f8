import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe("migrations", () => {
  it("the committed migrations produce exactly the schema the entities describe", async () => {
    const sql = await server.portcullis.app.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    expect(sql.trim()).toBe("");
  });
});
