/** Steps many scenarios share. Each is recorded like any other step. */
import { createHash, randomBytes } from "node:crypto";
import type { Actor } from "../actor.ts";
import { PASSWORD, type Run } from "../runner.ts";

export interface Person {
  actor: Actor;
  email: string;
  id: string;
}

/** Sign-up through the SDK (the actor keeps the session). */
export async function signUp(s: Run, name: string, extra: { username?: string; password?: string } = {}): Promise<Person> {
  const actor = s.actor(name);
  const email = s.email(name);
  const data = await s.call(`sign-up ${name}`, actor, (c) =>
    c.signUp.email({ name: `${name[0]!.toUpperCase()}${name.slice(1)}`, email, password: extra.password ?? PASSWORD, ...(extra.username ? { username: extra.username } : {}) }),
  );
  return { actor, email, id: s.need(data?.user.id, `${name}'s user id`) };
}

/**
 * Records what the actor's last response did with its session cookie, changed or not
 * (`Max-Age=N`, `no Max-Age`, `cleared`, `not sent`): a re-sent cookie and its Max-Age, which
 * step records leave out (actor.ts).
 */
export function noteSessionCookie(s: Run, step: string, actor: Actor): void {
  s.note(step, actor.last?.sessionCookieSent ?? "not sent");
}

/**
 * A mailed link without its callbackURL: followed so, both servers answer JSON (better-auth puts
 * `callbackURL=/` in every link, and answers it with a 302 to "/").
 */
export function withoutCallback(link: string): string {
  const url = new URL(link);
  url.searchParams.delete("callbackURL");
  return url.toString();
}

/**
 * A listing in creation order. Neither server promises an order for session listings (the
 * contract is silent, better-auth returns database order), so listings compare as sequences
 * sorted by creation time.
 */
export function byCreatedAt<T extends { data: unknown }>(result: T): T {
  if (Array.isArray(result.data)) result.data.sort((a: { createdAt: Date }, b: { createdAt: Date }) => +new Date(a.createdAt) - +new Date(b.createdAt));
  return result;
}

/** A user promoted by the operator, then signed in anew (a session that knows the role). */
export async function admin(s: Run, name = "root"): Promise<Person> {
  const person = await signUp(s, name);
  await s.target.promoteToAdmin(person.email);
  const actor = s.actor(`${name}-admin`);
  await s.call(`sign-in ${name} as admin`, actor, (c) => c.signIn.email({ email: person.email, password: PASSWORD }));
  return { ...person, actor };
}

/** A provider account on the loopback OpenID provider. */
export function providerAccount(s: Run, sub: string, email: string, emailVerified = true): void {
  s.oidc.setAccount({ sub, email, email_verified: emailVerified, name: `Provider ${sub}` });
}

/** The provider's login and consent for `url` as `sub`: where it sends the browser back (recorded). */
export async function authorize(s: Run, step: string, url: string, sub: string): Promise<string> {
  const outcome = await s.oidc.authorize(url, { sub });
  s.note(step, outcome.kind === "redirect" ? { redirect: outcome.location } : { form_post: outcome.action });
  if (outcome.kind !== "redirect") throw new Error("expected a redirect from the provider");
  return outcome.location;
}

/**
 * The whole browser flow: POST /sign-in/social (or /link-social), the provider, then the
 * callback in the same browser (its state cookie along). Returns the callback's answer.
 */
export async function socialFlow(
  s: Run,
  actor: Actor,
  sub: string,
  body: { callbackURL?: string; errorCallbackURL?: string; newUserCallbackURL?: string } = {},
  link = false,
  label = "",
): Promise<{ status: number; location: string | null }> {
  const suffix = label ? ` ${label}` : "";
  const start = link
    ? await s.call(`link-social${suffix}`, actor, (c) => c.linkSocial({ provider: "oidc", ...body }))
    : await s.call(`sign-in/social${suffix}`, actor, (c) => c.signIn.social({ provider: "oidc", ...body }));
  const location = await authorize(s, `provider redirect${suffix}`, s.need(start?.url, "authorization URL"), sub);
  return s.browse(`callback${suffix}`, actor, location);
}

/**
 * An id_token for `sub` from the loopback provider, as a native app gets one: a code flow of
 * its own with the client Portcullis' and better-auth's `google` providers are registered as.
 */
export async function mintIdToken(s: Run, sub: string, nonce: string): Promise<string> {
  const d = s.oidc.discovery;
  const { clientId, clientSecret } = s.oidc.postClient;
  const verifier = randomBytes(32).toString("base64url");
  const redirectUri = `${s.target.origin}/api/auth/callback/google`;
  const url = new URL(d.authorization_endpoint);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: "code",
    scope: "openid email profile",
    redirect_uri: redirectUri,
    state: randomBytes(8).toString("hex"),
    nonce,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  })) url.searchParams.set(k, v);
  const outcome = await s.oidc.authorize(url.toString(), { sub });
  if (outcome.kind !== "redirect") throw new Error("expected a redirect from the provider");
  const code = new URL(outcome.location).searchParams.get("code")!;
  const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId, client_secret: clientSecret });
  const res = await fetch(d.token_endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form });
  const tokens = (await res.json()) as { id_token?: string };
  if (!tokens.id_token) throw new Error(`no id_token: ${JSON.stringify(tokens)}`);
  return tokens.id_token;
}
