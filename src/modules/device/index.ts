import type { Family } from "../../core/index.ts";
import { DeviceCode } from "../../db/entities/index.ts";
import { OAuthError } from "../../errors.ts";
import { DEVICE_CODE_GRANT, redeemForTokens } from "./device.service.ts";

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
  // RFC 8628 §3.4 at the OpenID provider's token endpoint: the same codes, redeemed for its tokens.
  tokenGrants: [
    {
      grantType: DEVICE_CODE_GRANT,
      metadata: (app) => ({ device_authorization_endpoint: `${app.config.publicUrl.replace(/\/+$/, "")}${app.config.basePath}/device/code` }),
      redeem(app, em, params, clientId) {
        const deviceCode = params.device_code;
        if (!deviceCode || deviceCode.length > 256) throw new OAuthError("INVALID_REQUEST", "device_code is required");
        return redeemForTokens(app, em, { deviceCode, clientId });
      },
    },
  ],
};
