import { defineConfig } from "vitest/config";

export default defineConfig({
  // Tests import the package's own entries ("portcullis/client") from the sources, never a build.
  resolve: { conditions: ["portcullis-source"] },
  ssr: { resolve: { conditions: ["portcullis-source"], externalConditions: ["portcullis-source"] } },
  test: {
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel workers; each builds its own server and database.
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: "integration", include: ["test/integration/**/*.test.ts", "test/browser/**/*.test.ts", "test/compat/**/*.test.ts", "src/**/*.test.ts"] },
      },
      {
        // Real server processes (bin/portcullis.cjs serve): multi-instance, SIGKILL/SIGTERM.
        extends: true,
        test: { name: "process", include: ["test/process/**/*.test.ts"], testTimeout: 240_000, hookTimeout: 120_000 },
      },
    ],
  },
});
