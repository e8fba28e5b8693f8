// Loaded with `node --import` into a server process (test/process/lean-load.test.ts): on SIGUSR2 it
// writes the CommonJS modules loaded so far (every package we load lazily is CommonJS, or is
// reached through one) to stderr as one `LOADED_MODULES <json>` line. When the process starts its
// `migrate` process, it writes `MIGRATE_STARTED <json>`: whether MikroORM was loaded by then.
import childProcess from "node:child_process";
import { createRequire, syncBuiltinESMExports } from "node:module";

const loaded = () => Object.keys(createRequire(import.meta.url).cache);

process.on("SIGUSR2", () => {
  process.stderr.write(`LOADED_MODULES ${JSON.stringify(loaded())}\n`);
});

const spawn = childProcess.spawn;
childProcess.spawn = function (command, args, ...rest) {
  if (Array.isArray(args) && args.includes("migrate")) {
    const mikroOrmLoaded = loaded().some((file) => file.includes("node_modules/@mikro-orm/core/"));
    process.stderr.write(`MIGRATE_STARTED ${JSON.stringify({ mikroOrmLoaded })}\n`);
  }
  return spawn.call(this, command, args, ...rest);
};
syncBuiltinESMExports(); // `import { spawn } from "node:child_process"` sees this one too
