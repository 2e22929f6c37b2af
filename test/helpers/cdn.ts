import path from "node:path";
import { buildSync } from "esbuild";

/** zod's v3 API from node_modules, bundled into one ES module as a CDN serves zod@3.22.4/+esm (no network). */
export function zodBundle(): string {
  const entry = path.join(__dirname, "..", "..", "node_modules", "zod", "v3", "index.js");
  return buildSync({ entryPoints: [entry], bundle: true, format: "esm", minify: true, write: false, platform: "neutral", logLevel: "silent" }).outputFiles[0].text;
}

/** What a CDN answers a module with. */
export const JS_HEADERS = { "content-type": "application/javascript; charset=utf-8" };
