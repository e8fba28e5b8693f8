import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis } from "../../../src/index.ts";
import { FakeClock } from "../../harness/clock.ts";
import { createTestDatabase, type TestDatabase } from "../../harness/database.ts";
import { post, uniqueEmail } from "../../harness/http.ts";

/** Codes and addresses are keyed digests under the newest secret: a code mailed before a rotation still works after it. */
const A = "secret-A-secret-A-secret-A-secret-A-0001";
const B = "secret-B-secret-B-secret-B-secret-B-0002";

let db: TestDatabase;
const clock = new FakeClock();
const codes: Array<{ to: string; code: string }> = [];
const running: Portcullis[] = [];

async function start(secrets: string[]) {
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    logLevel: "silent",
    clock,
    secrets,
    rateLimit: { enabled: false },
    email: { send: (m) => void (m.code && codes.push({ to: m.to, code: m.code })) },
  });
  running.push(portcullis);
  return { portcullis, auth: `${await portcullis.listen(0, "127.0.0.1")}/api/auth` };
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const p of running) await p.close();
  await db?.drop();
});

describe("email codes across a secret rotation", () => {
  it("a code sent under secret A signs in once the service runs with [B, A]; a new send replaces it under B", async () => {
    const before = await start([A]);
    const email = uniqueEmail("otp-rotate");
    expect((await post(`${before.auth}/email-otp/send-verification-otp`, { email, type: "sign-in" })).status).toBe(200);
    await before.portcullis.app.mailer.settle();
    const { code } = codes.find((c) => c.to === email)!;
    await before.portcullis.close();
    running.splice(running.indexOf(before.portcullis), 1);

    const after = await start([B, A]);
    const res = await post(`${after.auth}/sign-in/email-otp`, { email, otp: code });
    expect(res.status, res.text).toBe(200);

    const other = uniqueEmail("otp-rotate-2");
    expect((await post(`${after.auth}/email-otp/send-verification-otp`, { email: other, type: "sign-in" })).status).toBe(200);
    await after.portcullis.app.mailer.settle();
    expect((await post(`${after.auth}/sign-in/email-otp`, { email: other, otp: codes.find((c) => c.to === other)!.code })).status).toBe(200);
  });
});
