import { createServer } from "node:net";
import { createPortcullis, type CreateOptions, type Portcullis, type PortcullisConfig } from "../../src/index.ts";
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

export interface TestServerOptions extends CreateOptions {
  /** Listen on a port picked first and make it the publicUrl (browser tests: the page's origin must be the service's own). */
  ownOrigin?: boolean;
  /**
   * Host name of that publicUrl (default 127.0.0.1). WebAuthn needs a domain as its RP ID, not an
   * IP: `localhost` (resolves to the loopback the server listens on, and is a secure context).
   */
  publicHost?: string;
  /** With ownOrigin: this port (picked by freePort) instead of a new one, when something must know the publicUrl first. */
  port?: number;
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A real server on a free loopback port, over a fresh database, with an injected clock.
 * Rate limits are off unless the test turns them on.
 */
export async function startTestServer(config: PortcullisConfig = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const { ownOrigin, publicHost = "127.0.0.1", port: chosenPort, ...createOptions } = options;
  const port = ownOrigin ? (chosenPort ?? (await freePort())) : 0;
  const db = await createTestDatabase({ migrated: true });
  const clock = new FakeClock();
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    secret: "test-secret-test-secret-test-secret-0123",
    logLevel: "silent",
    clock,
    ...config,
    rateLimit: { enabled: false, ...config.rateLimit },
    publicUrl: ownOrigin ? `http://${publicHost}:${port}` : (config.publicUrl ?? "http://127.0.0.1:3000"),
  }, createOptions);
  const url = await portcullis.listen(port, "127.0.0.1");
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
