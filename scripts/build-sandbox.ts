/**
 * Writes the sandbox process's bundle to dist/sandbox/sandbox-process.js (npm run build): what a
 * production install (npm ci --omit=dev, no esbuild) runs. Development bundles from the sources.
 */
import fs from "node:fs";
import path from "node:path";
import { bundleSandbox, PREBUILT_BUNDLE } from "../executor/sandbox/host/sandbox-files";

fs.mkdirSync(path.dirname(PREBUILT_BUNDLE), { recursive: true });
fs.writeFileSync(PREBUILT_BUNDLE, bundleSandbox());
console.log(`sandbox bundle → ${path.relative(process.cwd(), PREBUILT_BUNDLE)}`);
