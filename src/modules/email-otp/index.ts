import type { Family } from "../../core/index.ts";
import { emailOtpProof } from "./email-proof.ts";

export { emailOtpDoc } from "./email-otp.openapi.ts";
export { emailOtpRouter, forgetPasswordRouter, signInEmailOtp } from "./email-otp.router.ts";

/** Email one-time codes in the kernel: a code in place of the verification link, when `emailOTP.overrideDefaultEmailVerification`. */
export const emailOtpFamily: Family = {
  name: "email-otp",
  emailProofs: [emailOtpProof],
};
