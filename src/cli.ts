import { CommanderError } from "commander";
import { buildProgram, type CliRun } from "./cli/program.ts";
import { describeStartupError } from "./cli/startup-errors.ts";

/**
 * `portcullis <serve|migrate|create-admin>` (bin/portcullis.cjs runs the compiled copy). A failure
 * is printed as one line per problem, without a stack, and exits 1 (cli/startup-errors.ts).
 */
const run: CliRun = { sources: { env: process.env } };

try {
  await buildProgram(run, process.env).parseAsync(process.argv);
} catch (err) {
  // --help and --version end the parse early with exit code 0 (their text is written already).
  if (err instanceof CommanderError && err.exitCode === 0) process.exit(0);
  const lines = err instanceof CommanderError ? [] : describeStartupError(err, run.sources);
  for (const line of lines) process.stderr.write(`${line}\n`);
  process.exit(1);
}
