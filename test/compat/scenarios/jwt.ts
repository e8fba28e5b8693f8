/** JWTs for other services (docs/wire-contract.md §10, docs/machine-access.md): better-auth's jwt plugin shapes. */
import { decodeJwt, decodeProtectedHeader } from "jose";
import type { Scenario } from "../runner.ts";
import { PASSWORD } from "../runner.ts";

/** What a resource server reads from a token: the header's algorithm and type, which claims it carries. */
function shape(jwt: string | null | undefined) {
  if (!jwt) return "(none)";
  const { alg, typ, kid } = decodeProtectedHeader(jwt);
  const claims = decodeJwt(jwt);
  return { alg, typ: typ ?? null, kid: typeof kid === "string", claims: Object.keys(claims).sort().join(" "), lifetimeSec: (claims.exp ?? 0) - (claims.iat ?? 0) };
}

export const jwt: Scenario[] = [
  {
    name: "jwt: /token, /jwks, set-auth-jwt",
    async run(s) {
      const a = s.actor("a");
      const email = s.email("jwt");
      await s.call("sign up", a, (c) => c.signUp.email({ name: "J", email, password: PASSWORD }));
      const token = await s.call("token", a, (c) => c.token());
      s.note("the token's header and claims", shape(token?.token));
      // The keys themselves are each server's own: only their members and public algorithm are compared.
      const jwks = await s.call("jwks", a, async (c) => {
        const r = await c.jwks();
        const keys = (r.data?.keys ?? []).map((k: Record<string, unknown>) => ({ ...k, kid: "<kid>", ...(k.x ? { x: "<x>" } : {}), ...(k.y ? { y: "<y>" } : {}), ...(k.n ? { n: "<n>" } : {}) }));
        return { data: r.data ? { keys } : null, error: r.error };
      });
      s.note("the JWK Set's members", (jwks?.keys ?? []).map((k: Record<string, unknown>) => Object.keys(k).sort().join(" ")));
      await s.call("get-session", a, (c) => c.getSession());
      s.note("get-session's set-auth-jwt", shape(a.last?.authJwt));
      const anonymous = s.actor("anonymous");
      await s.call("token without a session", anonymous, (c) => c.token());
    },
  },
];
