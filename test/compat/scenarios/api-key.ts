/** API keys (docs/wire-contract.md §10, docs/machine-access.md): better-auth's api-key plugin shapes through apiKeyClient. */
import type { Scenario } from "../runner.ts";
import { PASSWORD } from "../runner.ts";

type Result = { data: any; error: any };

/** The key and its first characters are each server's own randomness: their shape is compared, not their value. */
function masked(r: Result): Result {
  if (!r.data || typeof r.data !== "object") return r;
  const mask = (k: Record<string, unknown>) => ({
    ...k,
    ...(typeof k.key === "string" ? { key: `<key ${k.key.startsWith(String(k.prefix ?? "")) ? "with" : "without"} its prefix>` } : {}),
    ...(typeof k.start === "string" ? { start: `<${k.start.length} characters>` } : {}),
  });
  const data = Array.isArray(r.data.apiKeys) ? { ...r.data, apiKeys: r.data.apiKeys.map(mask) } : mask(r.data);
  return { data, error: r.error };
}

const keyHeader = (key: string) => ({ fetchOptions: { headers: { "x-api-key": key } } });

export const apiKey: Scenario[] = [
  {
    name: "api-key: create, get, list, update, delete",
    async run(s) {
      const a = s.actor("a");
      await s.call("sign up", a, (c) => c.signUp.email({ name: "K", email: s.email("key"), password: PASSWORD }));
      const created = await s.call("create", a, async (c) => masked(await c.apiKey.create({ name: "ci" })));
      const raw = await a.client.apiKey.list();
      const id = (raw.data as any)?.apiKeys?.[0]?.id as string;
      s.note("the key is not in the listing", JSON.stringify(raw.data).includes(String((created as any)?.key)) ? "listed" : "absent");
      await s.call("get", a, async (c) => masked(await c.apiKey.get({ query: { id } })));
      await s.call("list", a, async (c) => masked(await c.apiKey.list()));
      await s.call("update", a, async (c) => masked(await c.apiKey.update({ keyId: id, name: "renamed", enabled: false })));
      await s.call("update with nothing", a, (c) => c.apiKey.update({ keyId: id }));
      await s.call("delete", a, (c) => c.apiKey.delete({ keyId: id }));
      await s.call("get after delete", a, (c) => c.apiKey.get({ query: { id } }));
    },
  },
  {
    name: "api-key: owner-only and server-only fields",
    async run(s) {
      const a = s.actor("a");
      const b = s.actor("b");
      await s.call("sign up a", a, (c) => c.signUp.email({ name: "A", email: s.email("owner"), password: PASSWORD }));
      await s.call("sign up b", b, (c) => c.signUp.email({ name: "B", email: s.email("other"), password: PASSWORD }));
      await a.client.apiKey.create({});
      const id = ((await a.client.apiKey.list()).data as any)?.apiKeys?.[0]?.id as string;
      await s.call("another user's key: get", b, (c) => c.apiKey.get({ query: { id } }));
      await s.call("another user's key: update", b, (c) => c.apiKey.update({ keyId: id, name: "mine" }));
      await s.call("another user's key: delete", b, (c) => c.apiKey.delete({ keyId: id }));
      await s.call("create with remaining", a, (c) => c.apiKey.create({ remaining: 5 } as never));
      await s.call("create with permissions", a, (c) => c.apiKey.create({ permissions: { files: ["read"] } } as never));
      await s.call("create with a rate limit", a, (c) => c.apiKey.create({ rateLimitMax: 100 } as never));
      await s.call("update with refillAmount", a, (c) => c.apiKey.update({ keyId: id, refillAmount: 5, refillInterval: 1000 } as never));
      await s.call("create with metadata (disabled)", a, (c) => c.apiKey.create({ metadata: { team: "ops" } }));
      await s.call("create without a session", s.actor("anonymous"), (c) => c.apiKey.create({}));
    },
  },
  {
    name: "api-key: x-api-key sessions",
    async run(s) {
      const a = s.actor("a");
      const email = s.email("keyed");
      await s.call("sign up", a, (c) => c.signUp.email({ name: "S", email, password: PASSWORD }));
      const key = (await a.client.apiKey.create({ name: "script" })).data?.key as string;
      const script = s.actor("script");
      await s.call("get-session with the key", script, (c) => c.getSession(keyHeader(key)));
      await s.call("update-user with the key", script, (c) => c.updateUser({ name: "Scripted", ...keyHeader(key) }));
      await s.call("list keys with the key", script, async (c) => masked(await c.apiKey.list(keyHeader(key))));
      await s.call("change-password with the key", script, (c) => c.changePassword({ currentPassword: PASSWORD, newPassword: "another pass 123", ...keyHeader(key) }));
      await s.call("create a key with the key", script, (c) => c.apiKey.create({ name: "child", ...keyHeader(key) }));
      await s.call("revoke-sessions with the key", script, (c) => c.revokeSessions(keyHeader(key)));
      await s.call("get-session with an unknown key", script, (c) => c.getSession(keyHeader(`pc_${"Z".repeat(64)}`)));
    },
  },
];
