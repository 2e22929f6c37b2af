/**
 * The container image's entry point (Dockerfile): starts one service from a production install
 * (`npm ci --omit=dev` plus the output of `npm run build`):
 *
 *   node --require ts-node/register/transpile-only scripts/serve.ts relayer|triggers
 *
 * Before the service loads its configuration (which refuses a bad one, naming every problem, and
 * exits 1), it checks that the built files it runs on are there: a missing build is named here
 * rather than failing later on the first request.
 */
import fs from "node:fs";
import path from "node:path";

const ROOT = path.join(__dirname, "..");

/** The built files each service needs, relative to the package root. */
export const BUILT_FILES: Record<Service, string[]> = {
  // The contract bindings (ABI and bytecode), the sandbox bundle (esbuild is a development
  // dependency), and the dashboard the relayer serves at /dashboard/.
  relayer: ["typechain-types/index.ts", "dist/sandbox/sandbox-process.js", "dist/dashboard/index.html"],
  triggers: ["typechain-types/index.ts"],
};

export const SERVICES = ["relayer", "triggers"] as const;
export type Service = (typeof SERVICES)[number];

/** What is wrong with the command line or the install, or undefined when `service` can start. */
export function serveProblem(service: string | undefined, root = ROOT): string | undefined {
  if (!SERVICES.includes(service as Service)) return `usage: serve.ts relayer|triggers (got ${JSON.stringify(service ?? "")})`;
  const missing = BUILT_FILES[service as Service].filter((f) => !fs.existsSync(path.join(root, f)));
  if (missing.length) return `the ${service} needs the output of "npm run build", missing: ${missing.join(", ")}`;
  return undefined;
}

if (require.main === module) {
  const service = process.argv[2];
  const problem = serveProblem(service);
  if (problem) {
    console.error(`Vesta: ${problem}`);
    process.exit(2);
  }
  // Each service's main reads the environment, exits 1 on a bad configuration, and stops on SIGTERM.
  require(service === "relayer" ? "../relayer/main" : "../triggers/main");
}
