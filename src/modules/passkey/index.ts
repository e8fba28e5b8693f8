import type { Family } from "../../core/index.ts";
import { Passkey } from "../../db/entities/index.ts";

export { passkeyDoc } from "./passkey.openapi.ts";
export { passkeyRouter } from "./passkey.router.ts";

/** Passkeys in the kernel: a passkey registered while nobody had proven the address goes with the unproven credentials (it would let a squatter back in). */
export const passkeyFamily: Family = {
  name: "passkey",
  holding: {
    async removed(_app, tx, userId, removal) {
      if (removal.accounts !== "none") await tx.nativeDelete(Passkey, { user: userId });
    },
  },
};
