import path from "node:path";
import { defineConfig } from "vite";

/**
 * The dashboard: Preact + the typed client, bundled at build time into dist/dashboard (served by
 * the relayer at /dashboard/; nothing is fetched from a CDN at run time).
 */
export default defineConfig({
  root: __dirname,
  base: "/dashboard/",
  publicDir: false,
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  resolve: { alias: { "@client": path.resolve(__dirname, "../client") } },
  build: {
    outDir: path.resolve(__dirname, "../dist/dashboard"),
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 2048,
    sourcemap: true,
  },
});
