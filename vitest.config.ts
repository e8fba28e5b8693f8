import { defineConfig } from "vitest/config";

/**
 * Files whose outcome cannot depend on the database dialect run in the SQLite pass only
 * (`npm test` runs everything else twice): they never open a database (unit tests, docs and
 * architecture checks, the error table), or their service always runs on SQLite whatever
 * PORTCULLIS_TEST_DB says (the container recipe replays its own `DATABASE_URL=sqlite:`), or they
 * check what a package installs and declares, not what the service stores (the light client and
 * verifier packages; `package.test.ts`, which serves the packed server on the run's dialect,
 * runs in both), or their subject is the process, not its data (hash-threads: the password
 * hashes' thread pool, its size, priority and queue).
 */
const dialectIndependent = [
  "src/**/*.test.ts",
  "test/integration/platform/{error-codes,docs,docs-typecheck,architecture,console-typecheck}.test.ts",
  "test/integration/jwt/docs-example.test.ts",
  "test/integration/openapi/openapi-errors.test.ts",
  "test/process/{container,client-package,verify-package,hash-threads}.test.ts",
];
const secondPass = process.env.PORTCULLIS_TEST_DB === "postgres";
const exclude = secondPass ? dialectIndependent : [];

export default defineConfig({
  // Tests import the package's own entries ("portcullis/client") from the sources, never a build.
  resolve: { conditions: ["portcullis-source"] },
  ssr: { resolve: { conditions: ["portcullis-source"], externalConditions: ["portcullis-source"] } },
  test: {
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel workers; each builds its own server and database. A worker keeps its
    // modules from one file to the next (isolate: false): importing the service's module graph
    // again for every file was a third of the run. Nothing a file sets up outlives it: every
    // server, database and clock is the file's own, and no test mocks a module.
    pool: "forks",
    maxWorkers: 2,
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: "integration", include: ["test/integration/**/*.test.ts", "test/browser/**/*.test.ts", "test/compat/**/*.test.ts", "src/**/*.test.ts"], exclude },
      },
      {
        // Real server processes (bin/portcullis.cjs serve): multi-instance, SIGKILL/SIGTERM.
        extends: true,
        test: { name: "process", include: ["test/process/**/*.test.ts"], exclude, testTimeout: 240_000, hookTimeout: 120_000 },
      },
    ],
  },
});
