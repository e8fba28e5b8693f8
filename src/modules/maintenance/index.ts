export { healthDoc } from "./maintenance.openapi.ts";
export { checkReady, readyProcedure } from "./ready.ts";
export { createSweeper, type Sweeper, type SweepResult } from "./sweeper.ts";
