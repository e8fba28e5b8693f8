import { createPortcullis, type Portcullis, type PortcullisConfig } from "../../src/index.ts";
import { FakeClock } from "./clock.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";

export interface TestServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** `${url}/api/auth` */
  auth: string;
  portcullis: Portcullis;
  clock: FakeClock;
  db: TestDatabase;
  close(): Promise<void>;
}

/**
 * A real server on a free loopback port, over a fresh database, with an injected clock.
 * Rate limits are off unless the test turns them on.
 */
export async function startTestServer(config: PortcullisConfig = {}): Promise<TestServer> {
  const db = await createTestDatabase();
  const clock = new FakeClock();
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    secret: "test-secret-test-secret-test-secret-0123",
    logLevel: "silent",
    clock,
    ...config,
    rateLimit: { enabled: false, ...config.rateLimit },
    publicUrl: config.publicUrl ?? "http://127.0.0.1:3000",
  });
  const url = await portcullis.listen(0, "127.0.0.1");
  return {
    url,
    auth: `${url}${portcullis.app.config.basePath}`,
    portcullis,
    clock,
    db,
    async close() {
      await portcullis.close();
      await db.drop();
    },
  };
}
