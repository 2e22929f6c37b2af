import Module from "node:module";
import path from "node:path";

/**
 * The npm packages the project's own files require when `entries` load (what a production install
 * must provide), each with one file that requires it. Runs in the current process (ts-node must be
 * registered for .ts entries): call it in a child process of its own.
 */
export function packagesRequiredBy(entries: string[], root: string): Map<string, string> {
  const found = new Map<string, string>();
  const mod = Module as unknown as { _resolveFilename: (req: string, parent: { filename?: string } | undefined, ...rest: unknown[]) => string };
  const resolve = mod._resolveFilename;
  mod._resolveFilename = function (req, parent, ...rest) {
    const file = parent?.filename ?? "";
    if (file.startsWith(root) && !file.includes(`${path.sep}node_modules${path.sep}`) && !req.startsWith(".") && !path.isAbsolute(req) && !req.startsWith("node:") && !Module.builtinModules.includes(req)) {
      const name = req.startsWith("@") ? req.split("/").slice(0, 2).join("/") : req.split("/")[0];
      if (!found.has(name)) found.set(name, path.relative(root, file));
    }
    return resolve.call(this, req, parent, ...rest);
  };
  try {
    for (const entry of entries) require(path.join(root, entry));
  } finally {
    mod._resolveFilename = resolve;
  }
  return found;
}

if (require.main === module) {
  const root = path.join(__dirname, "..", "..");
  const found = packagesRequiredBy(process.argv.slice(2), root);
  console.log(JSON.stringify(Object.fromEntries(found)));
}
