/**
 * The files of the app test/process/package.test.ts builds around the packed tarball: an app
 * that uses the typed client as its docs say, one that misuses it (each bad line is marked with
 * the error tsc must give it), and a loader probe that lists what importing the client loads.
 */

export const consumerPackageJson = { name: "consumer-app", version: "1.0.0", private: true, type: "module" };

/** An ordinary strict tsconfig (as `tsc --init` writes it): no allowImportingTsExtensions, no paths. */
export function consumerTsconfig(files: string[], extra: Record<string, unknown> = {}) {
  return {
    compilerOptions: {
      target: "ES2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      noUncheckedIndexedAccess: true,
      esModuleInterop: true,
      skipLibCheck: false,
      types: ["node"],
      outDir: "out",
      ...extra,
    },
    files,
  };
}

/**
 * Signs up, reads its session, and, given an admin, impersonates the new user with the token
 * from the typed result alone (no custom fetch), then stops. Prints one JSON line.
 */
export const appSource = `import { authErrorCode, createPortcullisClient, type PublicUser, type RouterOutputs } from "portcullis/client";
import type { AppRouter } from "portcullis/router";
import type { PortcullisConfig } from "portcullis";

const url = process.env.PORTCULLIS_URL ?? "http://127.0.0.1:3000";
const email = \`consumer.\${Date.now()}@example.test\`;
const password = "consumer-password-1";

const anon = createPortcullisClient({ url });
const up = await anon.signUp.email.mutate({ name: "Consumer", email, password });
if (up.token === null) throw new Error("sign-up gave no session");
const me = createPortcullisClient({ url, token: up.token });
const session: RouterOutputs["getSession"] = await me.getSession.query();
const user: PublicUser | undefined = session?.user;

let wrongPassword: string | undefined;
try {
  await anon.signIn.email.mutate({ email, password: "not-the-password" });
} catch (err) {
  wrongPassword = authErrorCode(err);
}

let impersonation: { impersonatedBy: string | null; userId: string; stopped: unknown; afterStop: unknown } | undefined;
if (process.env.ADMIN_EMAIL && process.env.ADMIN_PASSWORD) {
  const signedIn = await anon.signIn.email.mutate({ email: process.env.ADMIN_EMAIL, password: process.env.ADMIN_PASSWORD });
  if (!("token" in signedIn) || !signedIn.token) throw new Error("admin sign-in gave no session");
  const admin = createPortcullisClient({ url, token: signedIn.token });
  const started = await admin.admin.impersonateUser.mutate({ userId: up.user.id });
  const token: string = started.session.token;
  const asUser = createPortcullisClient({ url, token });
  const seen = await asUser.getSession.query();
  const stopped = await asUser.admin.stopImpersonating.mutate();
  impersonation = {
    impersonatedBy: seen?.session.impersonatedBy ?? null,
    userId: seen?.user.id ?? "",
    stopped,
    afterStop: await asUser.getSession.query(),
  };
}

// The server library's types are there for an app that embeds it (not run here).
const config: PortcullisConfig = { trustedOrigins: ["https://app.example.com"] };
type Procedures = keyof AppRouter["_def"]["record"];
const someProcedure: Procedures = "getSession";

console.log(JSON.stringify({ userId: up.user.id, sessionEmail: user?.email, wrongPassword, impersonation, config, someProcedure }));
`;

/** Each bad line ends with `// TSnnnn`: the error tsc must report on it, and no other line may have one. */
export const misuseSource = `import { createPortcullisClient } from "portcullis/client";

const client = createPortcullisClient({ url: "http://127.0.0.1:3000" });
await client.signUp.email.mutate({ name: "A", email: 42, password: "password-123" }); // TS2322
await client.signIn.phone.mutate({ phone: "+15550100" }); // TS2339
await client.getSession.mutate(); // TS2339
await client.admin.banUser.mutate({ banReason: "spam" }); // TS2345
const started = await client.admin.impersonateUser.mutate({ userId: "u1" });
const token: number = started.session.token; // TS2322
export { token };
`;

/** Registered by probe.mjs: appends every URL the ESM loader resolves to the file named in `data`. */
export const probeHooksSource = `import { appendFileSync } from "node:fs";
let out;
export async function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(out, resolved.url + "\\n");
  return resolved;
}
`;

/** Imports the client (and the router entry) and prints what got loaded: CommonJS files and native addons too. */
export const probeSource = `import { createRequire, register } from "node:module";
register("./probe-hooks.mjs", import.meta.url, { data: { out: process.argv[2] } });
const client = await import("portcullis/client");
const router = await import("portcullis/router");
const cjs = Object.keys(createRequire(import.meta.url).cache);
const natives = process.report.getReport().sharedObjects.filter((f) => f.endsWith(".node"));
console.log(JSON.stringify({ clientExports: Object.keys(client).sort(), routerExports: Object.keys(router), cjs, natives }));
`;
