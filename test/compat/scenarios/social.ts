/** OAuth 2.0 social sign-in and linking with the loopback OpenID provider (docs/wire-contract.md §5, §9). */
import { PASSWORD, type Scenario } from "../runner.ts";
import { authorize, mintIdToken, providerAccount, signUp, socialFlow } from "./helpers.ts";

export const social: Scenario[] = [
  {
    name: "social: a new user signs up with the code flow, then signs in again",
    async run(s) {
      const sub = s.sub("alice");
      providerAccount(s, sub, s.email("alice"));
      const browser = s.actor("browser");
      await socialFlow(s, browser, sub, { callbackURL: "/home", newUserCallbackURL: "/welcome" });
      await s.call("get-session", browser, (c) => c.getSession());
      await s.call("list-accounts", browser, (c) => c.listAccounts());
      const again = s.actor("again");
      await socialFlow(s, again, sub, { callbackURL: "/home", newUserCallbackURL: "/welcome" }, false, "again");
      await s.call("get-session again", again, (c) => c.getSession());
    },
  },
  {
    name: "social: a verified provider email links to the existing verified user",
    async run(s) {
      const alice = await signUp(s, "alice");
      await s.call("send-verification-email", alice.actor, (c) => c.sendVerificationEmail({ email: alice.email }));
      await s.browse("follow the verification link", alice.actor, await s.mail("verification mail", alice.email));
      const sub = s.sub("alice");
      providerAccount(s, sub, alice.email, true);
      const browser = s.actor("browser");
      await socialFlow(s, browser, sub, { callbackURL: "/home" });
      await s.call("get-session", browser, (c) => c.getSession());
      await s.call("list-accounts", browser, (c) => c.listAccounts());
      await s.call("password still works", s.actor("p"), (c) => c.signIn.email({ email: alice.email, password: PASSWORD }));
    },
  },
  {
    name: "social: a verified provider email and an unverified local account (pre-account takeover)",
    async run(s) {
      const squatter = await signUp(s, "owner");
      const sub = s.sub("owner");
      providerAccount(s, sub, squatter.email, true);
      const owner = s.actor("owner");
      await socialFlow(s, owner, sub, { callbackURL: "/home", errorCallbackURL: "/oops" });
      await s.call("owner's get-session", owner, (c) => c.getSession());
      await s.call("the squatter's session", squatter.actor, (c) => c.getSession());
      await s.call("the squatter's password", s.actor("p"), (c) => c.signIn.email({ email: squatter.email, password: PASSWORD }));
    },
  },
  {
    name: "social: a new user whose provider email is unverified; disableRedirect",
    async run(s) {
      const sub = s.sub("erin");
      providerAccount(s, sub, s.email("erin"), false);
      const browser = s.actor("browser");
      const start = await s.call("sign-in/social with disableRedirect", browser, (c) => c.signIn.social({ provider: "oidc", callbackURL: "/home", disableRedirect: true }));
      const location = await authorize(s, "provider redirect", s.need(start?.url, "authorization URL"), sub);
      await s.browse("callback", browser, location);
      await s.call("get-session", browser, (c) => c.getSession());
    },
  },
  {
    name: "social: an unverified provider email does not link",
    async run(s) {
      const alice = await signUp(s, "alice");
      const sub = s.sub("mallory");
      providerAccount(s, sub, alice.email, false);
      const browser = s.actor("browser");
      await socialFlow(s, browser, sub, { callbackURL: "/home", errorCallbackURL: "/oops" });
      s.note("the state cookie after the refused callback", browser.cookie("state") === null ? "gone" : "kept");
      await s.call("get-session", browser, (c) => c.getSession());
      await s.call("alice's accounts", alice.actor, (c) => c.listAccounts());
    },
  },
  {
    name: "social: link-social, unlink-account, never the last account",
    async run(s) {
      const alice = await signUp(s, "alice");
      const sub = s.sub("alice-elsewhere");
      providerAccount(s, sub, s.email("alice-elsewhere"), true);
      await socialFlow(s, alice.actor, sub, { callbackURL: "/linked" }, true);
      await s.call("list-accounts", alice.actor, (c) => c.listAccounts());
      await s.call("get-session", alice.actor, (c) => c.getSession());
      await s.call("unlink the provider", alice.actor, (c) => c.unlinkAccount({ providerId: "oidc" }));
      await s.call("list-accounts after unlinking", alice.actor, (c) => c.listAccounts());
      await s.call("unlink the last account", alice.actor, (c) => c.unlinkAccount({ providerId: "credential" }));
      await s.call("unlink one that is not linked", alice.actor, (c) => c.unlinkAccount({ providerId: "oidc" }));
    },
  },
  {
    name: "social: linking an account that belongs to someone else",
    async run(s) {
      const sub = s.sub("bob");
      providerAccount(s, sub, s.email("bob"), true);
      const bob = s.actor("bob");
      await socialFlow(s, bob, sub, { callbackURL: "/home" }, false, "bob");
      const alice = await signUp(s, "alice");
      await socialFlow(s, alice.actor, sub, { callbackURL: "/linked", errorCallbackURL: "/oops" }, true, "alice");
      await s.call("alice's accounts", alice.actor, (c) => c.listAccounts());
    },
  },
  {
    name: "social: a callback replayed in another browser is refused",
    async run(s) {
      const sub = s.sub("victim");
      providerAccount(s, sub, s.email("victim"), true);
      const attacker = s.actor("attacker");
      const start = await s.call("sign-in/social", attacker, (c) => c.signIn.social({ provider: "oidc", callbackURL: "/home" }));
      const location = await authorize(s, "provider redirect", s.need(start?.url, "authorization URL"), sub);
      const victim = s.actor("victim");
      await s.browse("callback in another browser", victim, location);
      await s.call("the other browser's session", victim, (c) => c.getSession());
      await s.browse("callback in the right browser", attacker, location);
    },
  },
  {
    name: "social: unknown provider, a callback without code or state",
    async run(s) {
      const browser = s.actor("browser");
      await s.call("sign-in/social with an unknown provider", browser, (c) => c.signIn.social({ provider: "nope" as "google" }));
      await s.browse("callback without code and state", browser, "/api/auth/callback/oidc");
      await s.browse("callback with a made-up state", browser, "/api/auth/callback/oidc?code=made-up&state=made-up");
      await s.call("sign-in/social with a foreign callbackURL", browser, (c) => c.signIn.social({ provider: "oidc", callbackURL: "https://evil.example/" }));
    },
  },
  {
    name: "social: ID token sign-in",
    async run(s) {
      const sub = s.sub("carol");
      providerAccount(s, sub, s.email("carol"), true);
      const idToken = await mintIdToken(s, sub, "nonce-1");
      const app = s.actor("app");
      await s.call("sign-in/social with an id_token", app, (c) => c.signIn.social({ provider: "google", idToken: { token: idToken, nonce: "nonce-1" } }));
      await s.call("get-session", app, (c) => c.getSession());
      await s.call("list-accounts", app, (c) => c.listAccounts());
      const other = s.actor("other");
      await s.call("wrong nonce", other, (c) => c.signIn.social({ provider: "google", idToken: { token: idToken, nonce: "nonce-2" } }));
      await s.call("tampered token", other, (c) => c.signIn.social({ provider: "google", idToken: { token: `${idToken.slice(0, -4)}AAAA` } }));
      await s.call("a provider without ID-token support", other, (c) => c.signIn.social({ provider: "oidc", idToken: { token: idToken } }));
    },
  },
  {
    name: "social: link-social with an ID token",
    async run(s) {
      const alice = await signUp(s, "alice");
      const sub = s.sub("alice-google");
      providerAccount(s, sub, s.email("alice-google"), true);
      const first = await mintIdToken(s, sub, "link-1");
      await s.call("link-social with an id_token", alice.actor, (c) => c.linkSocial({ provider: "google", idToken: { token: first, nonce: "link-1" } }));
      await s.call("list-accounts", alice.actor, (c) => c.listAccounts());
      await s.call("get-session", alice.actor, (c) => c.getSession());
      const again = await mintIdToken(s, sub, "link-2");
      await s.call("link the same account again", alice.actor, (c) => c.linkSocial({ provider: "google", idToken: { token: again, nonce: "link-2" } }));
      await s.call("list-accounts after linking again", alice.actor, (c) => c.listAccounts());
      const other = await mintIdToken(s, sub, "link-3");
      await s.call("wrong nonce", alice.actor, (c) => c.linkSocial({ provider: "google", idToken: { token: other, nonce: "link-4" } }));
      await s.call("a provider without ID-token support", alice.actor, (c) => c.linkSocial({ provider: "oidc", idToken: { token: other } }));
      await s.call("without a session", s.actor("nobody"), (c) => c.linkSocial({ provider: "google", idToken: { token: other, nonce: "link-3" } }));
      const bob = await signUp(s, "bob");
      await s.call("bob links alice's provider account", bob.actor, (c) => c.linkSocial({ provider: "google", idToken: { token: other, nonce: "link-3" } }));
      await s.call("bob's accounts", bob.actor, (c) => c.listAccounts());
    },
  },
  {
    name: "social: account-info passes the provider's user through; without accountId",
    async run(s) {
      const sub = s.sub("erin");
      s.oidc.setAccount({ sub, email: s.email("erin"), email_verified: true, name: `Provider ${sub}`, picture: null });
      const browser = s.actor("browser");
      await socialFlow(s, browser, sub, { callbackURL: "/home" });
      await s.call("account-info, the provider's picture null", browser, (c) => c.accountInfo({ query: { accountId: sub } }));
      await s.call("account-info with providerId", browser, (c) => c.accountInfo({ query: { accountId: sub, providerId: "oidc" } }));
      await s.call("account-info with another providerId", browser, (c) => c.accountInfo({ query: { accountId: sub, providerId: "google" } }));
      await s.call("account-info without accountId", browser, (c) => c.accountInfo({ query: {} }));
      await s.call("account-info without a query", browser, (c) => c.accountInfo());
    },
  },
  {
    name: "social: account-info, get-access-token, refresh-token",
    async run(s) {
      const sub = s.sub("dave");
      providerAccount(s, sub, s.email("dave"), true);
      const browser = s.actor("browser");
      await socialFlow(s, browser, sub, { callbackURL: "/home" });
      await s.call("account-info", browser, (c) => c.accountInfo({ query: { accountId: sub } }));
      await s.call("account-info of an account not linked", browser, (c) => c.accountInfo({ query: { accountId: "someone-else" } }));
      await s.call("get-access-token", browser, (c) => c.getAccessToken({ providerId: "oidc" }));
      await s.call("refresh-token", browser, (c) => c.refreshToken({ providerId: "oidc" }));
      await s.call("get-access-token after refreshing", browser, (c) => c.getAccessToken({ providerId: "oidc" }));
      await s.call("get-access-token for a provider not linked", browser, (c) => c.getAccessToken({ providerId: "google" }));
      await s.call("get-access-token for an unknown provider", browser, (c) => c.getAccessToken({ providerId: "nope" }));
      await s.call("get-access-token without a session", s.actor("nobody"), (c) => c.getAccessToken({ providerId: "oidc" }));
    },
  },
];
