import type { Family } from "../../core/index.ts";
import { DeviceCode } from "../../db/entities/index.ts";

export { deviceDoc } from "./device.openapi.ts";
export { deviceRouter } from "./device.router.ts";
/** Expired device codes stay this long, so that a late poll still gets expired_token (RFC 8628 §3.5): the sweeper waits for it. */
export { PURGE_AFTER_MS as DEVICE_CODE_GRACE_MS } from "./device.service.ts";

/**
 * Device authorization in the kernel: sign out everywhere ends the user's device codes in any
 * state, since an approved (or claimed) code turns into a session when polled (RFC 8628 §3.5:
 * invalid_grant once it is gone).
 */
export const deviceFamily: Family = {
  name: "device",
  holding: {
    async signedOutEverywhere(_app, tx, userId) {
      await tx.nativeDelete(DeviceCode, { user: userId });
    },
  },
};
