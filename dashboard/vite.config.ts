import fs from "node:fs";
import path from "node:path";
import { defineConfig, type Plugin } from "vite";

/** The README (its guides: quickstart, dashboard, triggers, limits) beside the dashboard, which links to it. */
const readme = (): Plugin => ({
  name: "vesta-readme",
  generateBundle() {
    this.emitFile({ type: "asset", fileName: "README.md", source: fs.readFileSync(path.resolve(__dirname, "../README.md"), "utf8") });
  },
});

/**
 * The dashboard: Preact + the typed client, bundled at build time into dist/dashboard (served by
 * the relayer at /dashboard/; nothing is fetched from a CDN at run time).
 */
export default defineConfig({
  root: __dirname,
  base: "/dashboard/",
  publicDir: false,
  plugins: [readme()],
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  resolve: { alias: { "@client": path.resolve(__dirname, "../client") } },
  build: {
    outDir: path.resolve(__dirname, "../dist/dashboard"),
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 2048,
    sourcemap: true,
    // What the first page loads (the entry and its static imports): test/dashboard.bundle.test.ts reads it.
    manifest: true,
  },
});
