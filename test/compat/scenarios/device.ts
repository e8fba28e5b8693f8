/** Device authorization grant, RFC 8628 (docs/wire-contract.md §7). Both servers poll at a 1 s interval here. */
import type { Actor } from "../actor.ts";
import type { Run, Scenario } from "../runner.ts";
import { signUp } from "./helpers.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const CLIENT = "compat-cli";
/** Just past the configured interval. */
const INTERVAL_MS = 1100;

async function requestCode(s: Run, cli: Actor) {
  const data = await s.call("device/code", cli, (c) => c.device.code({ client_id: CLIENT, scope: "openid profile" }));
  return { deviceCode: s.need(data?.device_code, "device_code"), userCode: s.need(data?.user_code, "user_code") };
}

const poll = (s: Run, step: string, cli: Actor, deviceCode: string, clientId = CLIENT) =>
  s.call(step, cli, (c) => c.device.token({ grant_type: GRANT, device_code: deviceCode, client_id: clientId }));

export const device: Scenario[] = [
  {
    name: "device: the user approves, the device gets a session",
    async run(s) {
      const cli = s.actor("cli");
      const { deviceCode, userCode } = await requestCode(s, cli);
      await poll(s, "token: pending", cli, deviceCode);
      const alice = await signUp(s, "alice");
      await s.call("verify (claims the code)", alice.actor, (c) => c.device({ query: { user_code: userCode } }));
      await s.call("approve", alice.actor, (c) => c.device.approve({ userCode }));
      await s.target.wait(INTERVAL_MS);
      const token = await poll(s, "token: granted", cli, deviceCode);
      cli.token = s.need(token?.access_token, "access_token");
      await s.call("get-session with the access token", cli, (c) => c.getSession());
      await s.target.wait(INTERVAL_MS);
      await poll(s, "token: used again", cli, deviceCode);
    },
  },
  {
    name: "device: the user denies",
    async run(s) {
      const cli = s.actor("cli");
      const { deviceCode, userCode } = await requestCode(s, cli);
      const alice = await signUp(s, "alice");
      await s.call("verify", alice.actor, (c) => c.device({ query: { user_code: userCode } }));
      await s.call("deny", alice.actor, (c) => c.device.deny({ userCode }));
      await s.call("approve after denying", alice.actor, (c) => c.device.approve({ userCode }));
      await s.target.wait(INTERVAL_MS);
      await poll(s, "token: denied", cli, deviceCode);
    },
  },
  {
    name: "device: polling too fast, wrong client, unknown codes",
    async run(s) {
      const cli = s.actor("cli");
      const { deviceCode, userCode } = await requestCode(s, cli);
      await poll(s, "token: another client", cli, deviceCode, "other-client");
      await poll(s, "token: unknown device code", cli, "made-up-device-code");
      await s.target.wait(INTERVAL_MS);
      await poll(s, "token: pending", cli, deviceCode);
      await poll(s, "token: at once again", cli, deviceCode);
      await s.call("device/code without client_id", cli, (c) => c.$fetch("/device/code", { method: "POST", body: {} }));
      await s.call("verify an unknown user code", cli, (c) => c.device({ query: { user_code: "ABCD-EFGH" } }));
      await s.call("approve without a session", cli, (c) => c.device.approve({ userCode }));
      const alice = await signUp(s, "alice");
      await s.call("approve a code not claimed", alice.actor, (c) => c.device.approve({ userCode }));
      await s.call("approve an unknown code", alice.actor, (c) => c.device.approve({ userCode: "ABCD-EFGH" }));
      await s.call("verify, code in lower case without the dash", alice.actor, (c) => c.device({ query: { user_code: userCode.replace("-", "").toLowerCase() } }));
    },
  },
  {
    name: "device: only the user who claimed the code may approve it",
    async run(s) {
      const cli = s.actor("cli");
      const { userCode } = await requestCode(s, cli);
      const alice = await signUp(s, "alice");
      const bob = await signUp(s, "bob");
      await s.call("alice claims", alice.actor, (c) => c.device({ query: { user_code: userCode } }));
      await s.call("bob verifies too", bob.actor, (c) => c.device({ query: { user_code: userCode } }));
      await s.call("bob approves", bob.actor, (c) => c.device.approve({ userCode }));
      await s.call("bob denies", bob.actor, (c) => c.device.deny({ userCode }));
      await s.call("alice approves", alice.actor, (c) => c.device.approve({ userCode }));
    },
  },
];
