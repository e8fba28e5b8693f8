export { verificationDoc } from "./verification.openapi.ts";
export { verificationProcedures } from "./verification.router.ts";
