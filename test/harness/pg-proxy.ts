import { createConnection, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A PostgreSQL wire-protocol proxy on 127.0.0.1 (a fake at the edge, like the SMTP sink): every
 * byte is forwarded both ways to the real server, and the client's side is read to count the
 * statements it runs, per connection: frontend 'Q' (simple query) and 'E' (execute, extended
 * protocol) messages (PostgreSQL protocol 3.0, "Message Formats"). Each statement is recorded
 * with its SQL text (a 'Q' carries it; an 'E' runs the statement its 'B' bound, whose text the
 * 'P' that parsed it carried, or an earlier one on the same connection for a named statement).
 */

export interface Statement {
  connection: number;
  kind: "Q" | "E";
  sql: string;
}

export interface PgProxy {
  /** postgres://…@127.0.0.1:<proxy port>/<database> for a URL of the real server. */
  urlFor(databaseUrl: string): string;
  /** Statements seen since the start or the last `reset()`, in order. */
  statements(): Statement[];
  reset(): void;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** The frontend side of one connection: an untyped startup phase, then typed messages. */
class FrontendReader {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  /** Statement name → SQL text (named statements live as long as the connection). */
  private readonly parsed = new Map<string, string>();
  private bound = "";

  constructor(private readonly onStatement: (kind: "Q" | "E", sql: string) => void) {}

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (!this.started) {
        // StartupMessage, SSLRequest, GSSENCRequest, CancelRequest: Int32 length, Int32 code.
        if (this.buffer.length < 8) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.started = true;
        this.buffer = this.buffer.subarray(length);
        continue;
      }
      if (this.buffer.length < 5) return;
      const type = String.fromCharCode(this.buffer[0]!);
      const length = this.buffer.readInt32BE(1);
      if (this.buffer.length < 1 + length) return;
      this.message(type, this.buffer.subarray(5, 1 + length));
      this.buffer = this.buffer.subarray(1 + length);
    }
  }

  private message(type: string, body: Buffer): void {
    const cstrings = () => body.toString("utf8").split("\0");
    if (type === "Q") this.onStatement("Q", cstrings()[0]!);
    else if (type === "P") {
      const [name, sql] = cstrings();
      this.parsed.set(name!, sql!);
    } else if (type === "B") this.bound = cstrings()[1]!;
    else if (type === "E") this.onStatement("E", this.parsed.get(this.bound) ?? `(statement "${this.bound}")`);
  }
}

export async function startPgProxy(target = { host: "127.0.0.1", port: 5432 }): Promise<PgProxy> {
  let recorded: Statement[] = [];
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const id = ++connections;
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    const reader = new FrontendReader((kind, sql) => recorded.push({ connection: id, kind, sql: sql.replace(/\s+/g, " ").trim() }));
    client.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on("error", end);
      s.on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    statements: () => [...recorded],
    reset() {
      recorded = [];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
