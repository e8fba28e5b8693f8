// The admin console's build (scripts/build-console.mjs runs it): a static app under /admin/,
// output in dist/console/ (never committed). `portcullis/client` is the typed client apps use,
// taken from the sources here as the package's "portcullis-source" export condition does in the tests.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here("."),
  base: "/admin/",
  publicDir: false,
  plugins: [react()],
  resolve: { alias: { "portcullis/client": here("../src/client/index.ts") } },
  build: {
    outDir: here("../dist/console"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // One small app: no preload helper inlined, nothing that would need 'unsafe-inline' in the CSP.
    modulePreload: false,
  },
});
