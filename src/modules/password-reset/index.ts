export { passwordResetDoc } from "./password-reset.openapi.ts";
export { passwordResetProcedures } from "./password-reset.router.ts";
