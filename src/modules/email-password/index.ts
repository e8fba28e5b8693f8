export { emailPasswordDoc } from "./email-password.openapi.ts";
export { isUsernameAvailable, signInRouter, signUpRouter } from "./email-password.router.ts";
export { detectLegacyHashes } from "./legacy-hashes.ts";
