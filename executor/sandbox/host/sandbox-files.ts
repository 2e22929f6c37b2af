/**
 * The files a sandbox process may read, and nothing else: its code (process/main.ts with what it
 * imports: the wire/ modules, quickjs-emscripten, ethers), bundled by esbuild into one plain-JS
 * file once per relayer process; the QuickJS WASM file; the guest modules (guest/*.js). The
 * bundle needs no TypeScript loader (a process starts in ~0.1 s, not ~1 s with ts-node) and lives
 * in a fresh directory of its own (mkdtemp, so no other user can have placed or replaced it;
 * readable by the sandbox's user, writable by no one), removed when the relayer exits.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type SandboxFiles = {
  /** The bundled sandbox process (process/main.ts). */
  entry: string;
  /** quickjs-emscripten's release-sync WASM. */
  wasmFile: string;
  /** The guest modules. */
  guestDir: string;
};

const QUICKJS_VARIANT = "@jitl/quickjs-wasmfile-release-sync";
let files: SandboxFiles | undefined;

/** Resolves a file of the QuickJS variant as quickjs-emscripten itself would, through symlinks. */
function variantFile(subpath: string): string {
  const from = path.dirname(require.resolve("quickjs-emscripten"));
  return fs.realpathSync(require.resolve(`${QUICKJS_VARIANT}/${subpath}`, { paths: [from] }));
}

/** Where `npm run build` writes the bundle (what a production install, without esbuild, runs). */
export const PREBUILT_BUNDLE = path.join(__dirname, "..", "..", "..", "dist", "sandbox", "sandbox-process.js");

/** Bundles process/main.ts with esbuild (a development dependency): ~0.4 s. */
export function bundleSandbox(): Uint8Array {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildSync } = require("esbuild") as typeof import("esbuild");
  const result = buildSync({
    entryPoints: [path.join(__dirname, "..", "process", "main.ts")],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    write: false,
    legalComments: "none",
    logLevel: "silent",
    // The variant loads its Emscripten module by a dynamic import(), which would pick the ESM build
    // (it needs import.meta); the CommonJS build is the one a CommonJS bundle can hold.
    alias: { [`${QUICKJS_VARIANT}/emscripten-module`]: variantFile("emscripten-module") },
  });
  return result.outputFiles[0].contents;
}

/**
 * The sandbox's code: bundled from the sources where esbuild is installed (development, tests: never
 * stale), else the bundle `npm run build` made (a production install has no esbuild).
 */
function sandboxCode(): Uint8Array {
  let haveEsbuild = true;
  try {
    require.resolve("esbuild");
  } catch {
    haveEsbuild = false;
  }
  if (haveEsbuild) return bundleSandbox();
  if (fs.existsSync(PREBUILT_BUNDLE)) return fs.readFileSync(PREBUILT_BUNDLE);
  throw new Error(`the sandbox bundle is missing: ${PREBUILT_BUNDLE} (run npm run build)`);
}

/** Makes the sandbox's files on first use, then answers the same files for the life of the process. */
export function sandboxFiles(): SandboxFiles {
  if (files) return files;
  const code = sandboxCode();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vesta-sandbox-")));
  fs.chmodSync(dir, 0o755);
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const entry = path.join(dir, "sandbox-process.js");
  fs.writeFileSync(entry, code, { mode: 0o444, flag: "wx" });
  // Copies, not the checkout's files: the sandbox's user must not need to reach into the checkout
  // (a home directory or a private clone is closed to other users) nor into node_modules.
  const wasmFile = path.join(dir, "quickjs.wasm");
  fs.writeFileSync(wasmFile, fs.readFileSync(variantFile("wasm")), { mode: 0o444, flag: "wx" });
  const guestDir = path.join(dir, "guest");
  fs.mkdirSync(guestDir, { mode: 0o755 });
  const sources = path.join(__dirname, "..", "guest");
  for (const name of fs.readdirSync(sources).filter((f) => f.endsWith(".js"))) {
    fs.writeFileSync(path.join(guestDir, name), fs.readFileSync(path.join(sources, name)), { mode: 0o444, flag: "wx" });
  }
  files = { entry, wasmFile, guestDir };
  return files;
}
