import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel workers; each builds its own server and database.
    pool: "forks",
    maxWorkers: 2,
  },
});
