export { adminDoc } from "./admin.openapi.ts";
export { adminRouter } from "./admin.router.ts";
export { BootstrapError, createAdmin } from "./bootstrap.service.ts";
