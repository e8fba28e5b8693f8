export { sessionDoc } from "./session.openapi.ts";
export { okProcedure, sessionProcedures } from "./session.router.ts";
