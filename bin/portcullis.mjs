#!/usr/bin/env node
// The CLI, compiled (dist/, ESM): no TypeScript loader in the serving process. A checkout whose
// sources are newer than dist/ (or has none yet) builds first (scripts/build.mjs).
import { ensureBuilt } from "../scripts/build.mjs";

ensureBuilt();
await import("../dist/src/cli.js");
