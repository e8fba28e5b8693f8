export { magicLinkDoc } from "./magic-link.openapi.ts";
export { magicLinkRouter, signInMagicLink } from "./magic-link.router.ts";
