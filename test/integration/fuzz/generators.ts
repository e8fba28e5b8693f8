import fc from "fast-check";
import { appRouter } from "../../../src/trpc/app-router.ts";
import { TEST_ORIGIN } from "../../harness/http.ts";

/**
 * The fuzzer's generators: hostile values, plausible values for the fields the procedures'
 * zod schemas name (so cases get past validation into the services), and whole requests
 * (bodies in every encoding, query strings, path parameters, headers, credentials).
 */

// --- seed data ---------------------------------------------------------------------------

/** The victim's password: NFKC folds the ligature and the full-width digits ("Pässwörd-fine-123"). */
export const VICTIM_PASSWORD = "Pässwörd-ﬁne-１２３";
export const NFKC_VARIANTS = [
  VICTIM_PASSWORD,
  VICTIM_PASSWORD.normalize("NFC"),
  VICTIM_PASSWORD.normalize("NFD"),
  VICTIM_PASSWORD.normalize("NFKC"),
  VICTIM_PASSWORD.normalize("NFKD"),
];
export const ACTOR_PASSWORD = "actor-password-never-fuzzed-0";

export interface Seed {
  victimEmail: string;
  victimId: string;
  userEmail: string;
  adminEmail: string;
  resetToken: string;
  userCode: string;
  deviceCode: string;
  /** An address without an account that holds a live magic link and live codes of every type (passwordless). */
  passwordlessEmail: string;
  /** That address's live magic-link token. */
  magicLinkToken: string;
  /** That address's live sign-in code. */
  signInCode: string;
}

// --- values ------------------------------------------------------------------------------

/** JSON text emitted as is: numbers JSON.stringify cannot write (1e400, 30 digits). */
class Raw {
  constructor(readonly text: string) {}
}
/** An object as its entries: keeps `__proto__` and duplicate keys literal in the JSON text. */
class Obj {
  constructor(readonly entries: [string, Val][]) {}
}
export type Val = null | boolean | number | string | Raw | Obj | Val[];

export function toJson(v: Val): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Obj) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(",")}}`;
  if (Array.isArray(v)) return `[${v.map(toJson).join(",")}]`;
  return JSON.stringify(v) ?? "null";
}

/** encodeURIComponent that survives lone surrogates (they cannot travel as UTF-8: U+FFFD instead). */
export function enc(s: string): string {
  return encodeURIComponent(s.replace(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])/g, "\uFFFD"));
}

/** A query-string / form value: only strings travel there. */
function toText(v: Val): string {
  if (typeof v === "string") return v;
  if (v instanceof Raw) return v.text;
  return toJson(v);
}

const POLLUTION_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "isAdmin", "role"];

const unicodeEdge = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uFEFF",
  "\u200B\u200D",
  "\u202Eevil",
  "ﬁ",
  "Å",
  "A\u030A",
  "\u212B",
  "ｐａｓｓｗｏｒｄ",
  "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝",
  "İstanbul",
  "straße",
  "ǅ",
  "\uD800",
  "\uDFFF",
  "x\uD83D",
  "🏳️‍🌈👨‍👩‍👧",
  "e\u0301\u0301\u0301",
  "\r\n\t",
  "%00",
  "%ZZ",
  "../../etc/passwd",
  "' OR 1=1 --",
  "\"; drop table users; --",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "\\",
  "null",
  "undefined",
  "NaN",
  "[]",
  "{}",
  ...POLLUTION_KEYS,
);

const hugeNumber = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 1e21, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 2 ** 32, -(2 ** 63)),
  fc.constantFrom("1e400", "-1e400", "123456789012345678901234567890", "1e-400", "-0.0e0").map((t) => new Raw(t)),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const oversized = fc.oneof(
  fc.integer({ min: 300, max: 5000 }).map((n) => "a".repeat(n)),
  fc.integer({ min: 5000, max: 60_000 }).map((n) => "é".repeat(n / 2)),
  fc.integer({ min: 66_000, max: 90_000 }).map((n) => "x".repeat(n)),
);

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 4, arbitrary: unicodeEdge },
  { weight: 1, arbitrary: oversized },
);

const scalar: fc.Arbitrary<Val> = fc.oneof(
  { weight: 6, arbitrary: hostileString },
  { weight: 2, arbitrary: hugeNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

export const { value: hostileValue } = fc.letrec<{ value: Val }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 8, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(tie("value"), { maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...POLLUTION_KEYS), fc.string({ maxLength: 8 })), tie("value")), { maxLength: 4 })
        .map((e) => new Obj(e)),
    },
  ),
}));

/** Deeply nested arrays/objects (parsers and validators must not blow the stack or answer 5xx). */
const deepNesting = fc.integer({ min: 100, max: 5000 }).map((depth) => new Raw(`${"[".repeat(depth)}${"]".repeat(depth)}`));

export function flipCase(s: string, mask: number[]): string {
  return [...s].map((c, i) => ((mask[i % mask.length] ?? 0) % 2 ? c.toUpperCase() : c.toLowerCase())).join("");
}
export const caseMask = fc.array(fc.nat(1), { minLength: 1, maxLength: 12 });

/** Plausible values for the fields the schemas name, so cases get past validation into the services. */
function plausible(field: string, seed: Seed): fc.Arbitrary<Val> {
  const f = field.toLowerCase();
  if (f.includes("email")) {
    return fc.oneof(
      caseMask.map((m) => flipCase(seed.victimEmail, m)),
      fc.constant(` ${seed.victimEmail.toUpperCase()} `),
      fc.emailAddress(),
      fc.constant(seed.userEmail),
      fc.constant(seed.passwordlessEmail),
    );
  }
  if (f.includes("password")) return fc.oneof(fc.constantFrom(...NFKC_VARIANTS), fc.string({ minLength: 8, maxLength: 24 }), fc.constant("x".repeat(129)));
  if (f === "token" || f === "sessiontoken") return fc.oneof(fc.constant(seed.resetToken), fc.constant(seed.magicLinkToken), fc.string({ minLength: 20, maxLength: 64 }));
  if (f === "otp") return fc.oneof(fc.constant(seed.signInCode), fc.stringMatching(/^\d{6}$/), fc.string({ minLength: 1, maxLength: 12 }));
  if (f === "userid" || f === "id" || f === "sessionid") return fc.oneof(fc.constant(seed.victimId), fc.uuid(), fc.constant("00000000-0000-0000-0000-000000000000"));
  if (f === "user_code" || f === "usercode") {
    return fc.oneof(fc.constant(seed.userCode), fc.constant(seed.userCode.toLowerCase().replace("-", "")), fc.string({ minLength: 8, maxLength: 9 }));
  }
  if (f === "device_code") return fc.oneof(fc.constant(seed.deviceCode), fc.string({ minLength: 10, maxLength: 60 }));
  if (f === "client_id") return fc.constantFrom("fuzz-client", "");
  if (f === "grant_type") return fc.constantFrom("urn:ietf:params:oauth:grant-type:device_code", "authorization_code", "password");
  if (f.includes("url") || f === "redirectto" || f === "image") {
    return fc.constantFrom("/", "/dashboard", `${TEST_ORIGIN}/x`, "https://evil.example/", "//evil.example", "javascript:alert(1)", "http://[::1", "http://127.0.0.1:3000@evil.example/", "/x\u0000y");
  }
  if (f.includes("username")) return fc.oneof(fc.stringMatching(/^[a-z0-9_.]{3,30}$/), fc.constantFrom("Fuzz.User", "ab", "a".repeat(31)));
  if (f === "rememberme" || f === "revokeothersessions") return fc.oneof(fc.boolean(), fc.constantFrom("true", "false", "yes", 1, 0));
  if (f === "role") return fc.oneof(fc.constantFrom("admin", "user", "admin,user", "nope"), fc.constant<Val>(["user", "admin"]));
  if (f.startsWith("ban")) return fc.oneof(fc.integer({ min: -10, max: 1e6 }), fc.string({ maxLength: 10 }));
  if (f === "limit" || f === "offset") return fc.oneof(fc.integer({ min: -5, max: 500 }), fc.constantFrom("10", "-1", "1e3", "abc"));
  return fc.oneof(fc.string({ maxLength: 20 }), unicodeEdge, fc.integer(), fc.boolean());
}

// --- input shapes from the procedures' zod schemas ---------------------------------------

type ZodLike = { _zod?: { def?: Record<string, any> } };

/** Field names (nested objects one level down) of a zod input schema. */
function shapeOf(schema: ZodLike | undefined, depth = 0): Record<string, Record<string, unknown> | null> {
  const def = schema?._zod?.def;
  if (!def || depth > 4) return {};
  switch (def.type) {
    case "object": {
      const out: Record<string, Record<string, unknown> | null> = {};
      for (const [key, child] of Object.entries(def.shape as Record<string, ZodLike>)) {
        const nested = shapeOf(child, depth + 1);
        out[key] = Object.keys(nested).length ? nested : null;
      }
      return out;
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return shapeOf(def.innerType, depth + 1);
    case "pipe":
      return { ...shapeOf(def.in, depth + 1), ...shapeOf(def.out, depth + 1) };
    case "union":
      return Object.assign({}, ...(def.options as ZodLike[]).map((o) => shapeOf(o, depth + 1)));
    case "intersection":
      return { ...shapeOf(def.left, depth + 1), ...shapeOf(def.right, depth + 1) };
    default:
      return {};
  }
}

export interface ProcInfo {
  type: "query" | "mutation";
  fields: Record<string, Record<string, unknown> | null>;
}

export const procedures: Record<string, ProcInfo> = Object.fromEntries(
  Object.entries((appRouter as unknown as { _def: { procedures: Record<string, any> } })._def.procedures).map(([name, proc]) => {
    const inputs = (proc._def.inputs ?? []) as ZodLike[];
    return [name, { type: proc._def.type, fields: Object.assign({}, ...inputs.map((i) => shapeOf(i))) }];
  }),
);

function objectFor(fields: Record<string, Record<string, unknown> | null>, seed: Seed): fc.Arbitrary<Obj> {
  const names = Object.keys(fields);
  const known = fc.subarray(names).chain((chosen) =>
    chosen.length === 0
      ? fc.constant([] as [string, Val][])
      : fc.tuple(
          ...chosen.map((name) => {
            const nested = fields[name];
            const value: fc.Arbitrary<Val> = nested
              ? fc.oneof(objectFor(nested as Record<string, Record<string, unknown> | null>, seed), hostileValue)
              : fc.oneof({ weight: 3, arbitrary: plausible(name, seed) }, { weight: 2, arbitrary: hostileValue });
            return value.map((v) => [name, v] as [string, Val]);
          }),
        ),
  );
  const extra = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...POLLUTION_KEYS), fc.string({ maxLength: 10 })), hostileValue), { maxLength: 3 });
  return fc.tuple(known, extra, fc.boolean()).map(([k, e, extraFirst]) => new Obj(extraFirst ? [...e, ...k] : [...k, ...e]));
}

// --- requests ----------------------------------------------------------------------------

export type AuthKind = "none" | "user" | "admin" | "admin-cookie" | "cookie-foreign-origin" | "cookie-null-origin" | "garbage-bearer" | "garbage-cookie" | "user-api-key" | "garbage-api-key";
export const authKind = fc.constantFrom<AuthKind>(
  "none", "user", "admin", "admin", "admin-cookie", "cookie-foreign-origin", "cookie-null-origin", "garbage-bearer", "garbage-cookie", "user-api-key", "garbage-api-key",
);

/** Header values fetch can send (visible ASCII, space, Latin-1). */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 60 });

export const extraHeaders = fc.record(
  {
    "x-forwarded-for": fc.oneof(fc.ipV4(), fc.ipV6(), headerText, fc.constant("1".repeat(400)), fc.constant(", ,")),
    "user-agent": fc.oneof(headerText, fc.constant("U".repeat(4000))),
    "accept-language": headerText,
    referer: fc.oneof(headerText, fc.constant("https://evil.example/")),
    "x-request-id": headerText,
    "x-api-key": fc.oneof(headerText, fc.constant("pc_" + "A".repeat(43)), fc.constant("k".repeat(4000))),
  },
  { requiredKeys: [] },
);

export const contentTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/x-www-form-urlencoded",
  "text/plain",
  "multipart/form-data; boundary=xyz",
  "application/octet-stream",
  "",
  "application/json; charset=latin1",
  "application/jsonx",
  ";;;",
);

type BodyKind = "json" | "form" | "junk" | "empty" | "non-object" | "deep" | "huge";
const bodyKind = fc.constantFrom<BodyKind>("json", "json", "json", "json", "form", "form", "junk", "empty", "non-object", "deep", "huge");

export interface Case {
  method: string;
  path: string;
  body?: string | undefined;
  contentType?: string | undefined;
  auth: AuthKind;
  headers: Record<string, string>;
}

export function bodyArb(fields: Record<string, Record<string, unknown> | null>, seed: Seed, preferForm: boolean) {
  const overrideType = fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: contentTypes });
  return fc.tuple(bodyKind, objectFor(fields, seed), overrideType, hostileValue, fc.string({ maxLength: 50 }), deepNesting).map(
    ([kind, obj, overrideType, other, junk, deep]) => {
      let body: string | undefined;
      let type: string;
      switch (kind) {
        case "json":
          body = toJson(obj);
          type = "application/json";
          break;
        case "form":
          body = obj.entries.map(([k, v]) => `${enc(k)}=${enc(toText(v))}`).join("&");
          type = "application/x-www-form-urlencoded";
          break;
        case "junk":
          body = junk.length % 3 === 0 ? toJson(obj).slice(0, Math.max(1, toJson(obj).length - 2)) : junk;
          type = preferForm && junk.length % 2 ? "application/x-www-form-urlencoded" : "application/json";
          break;
        case "empty":
          body = undefined;
          type = junk.length % 2 ? "application/json" : "";
          break;
        case "non-object":
          body = toJson(other);
          type = "application/json";
          break;
        case "deep":
          body = deep.text;
          type = "application/json";
          break;
        case "huge":
          body = `{"email":"${"x".repeat(70 * 1024)}"}`;
          type = "application/json";
          break;
      }
      return { body, contentType: overrideType ?? type };
    },
  );
}

export function queryString(fields: Record<string, Record<string, unknown> | null>, seed: Seed) {
  const rawPieces = fc.constantFrom("%", "%E0%A4%A", "%ZZ", "&&", "=", "+", "a=1&a=2", "%00", "%C0%80", "%uD800", "__proto__[x]=1", "constructor[prototype][y]=1");
  // Node refuses a request head over 16 KiB itself (431, route-table.test.ts): stay below it.
  return fc.tuple(objectFor(fields, seed), fc.array(rawPieces, { maxLength: 2 })).map(([obj, raw]) =>
    [...obj.entries.map(([k, v]) => `${enc(k).slice(0, 200)}=${enc(toText(v)).slice(0, 1500)}`), ...raw].join("&").slice(0, 6000),
  );
}

export function pathParam(seed: Seed) {
  return fc.oneof(
    fc.constant(seed.resetToken),
    fc.string({ minLength: 1, maxLength: 40 }).map(enc),
    fc.constantFrom("%", "%ZZ", "%E0%A4%A", "%00", "..", "%2F", "%C0%AF", "x".repeat(3000)),
  );
}
