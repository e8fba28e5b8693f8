/** Small endpoints every client may touch (docs/wire-contract.md §4, §9). */
import type { Scenario } from "../runner.ts";

export const misc: Scenario[] = [
  {
    name: "misc: ok, the error page",
    async run(s) {
      const browser = s.actor("browser");
      await s.call("ok", browser, (c) => c.$fetch("/ok"));
      await s.browse("error page", browser, "/api/auth/error?error=STATE_MISMATCH");
      await s.browse("unknown path", browser, "/api/auth/no-such-endpoint");
    },
  },
];
