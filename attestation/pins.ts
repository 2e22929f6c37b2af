/**
 * What the verifier pins governance to: the runtime code of AppAuth (compiled from this checkout,
 * or a configured code hash) and the code of a Safe (Safe 1.5.0 of @safe-global/safe-smart-account,
 * whose code hashes are those of the Safe release: the singletons `Safe` and `SafeL2` behind a
 * `SafeProxy`). Only code read here is trusted to answer `owner()`, `getThreshold()`, ...
 */
import fs from "node:fs";
import path from "node:path";
import { keccak256, zeroPadValue } from "ethers";

/** The governance values a verifier expects; each one that is missing leaves its check skipped. */
export type GovernancePins = {
  /** EXTCODEHASH of the AppAuth deployment (default: computed from the compiled artifact). */
  appAuthCodeHash?: string;
  /** The Safe that must own AppAuth. */
  safe?: string;
  /** Its signature threshold. */
  safeThreshold?: number;
  /** Its owners (any order). */
  safeOwners?: string[];
};

const ARTIFACTS = path.resolve(__dirname, "..", "artifacts");
const SAFE_ARTIFACTS = "@safe-global/safe-smart-account/build/artifacts/contracts";
const deployedCode = (name: string): string => (require(`${SAFE_ARTIFACTS}/${name}.json`) as { deployedBytecode: string }).deployedBytecode;

/** Runtime code hashes of a genuine Safe: the proxy, and the singletons it may delegate to. */
export const SAFE_CODE = {
  proxy: keccak256(deployedCode("proxies/SafeProxy.sol/SafeProxy")),
  singletons: new Map([
    [keccak256(deployedCode("Safe.sol/Safe")), "Safe 1.5.0"],
    [keccak256(deployedCode("SafeL2.sol/SafeL2")), "SafeL2 1.5.0"],
  ]),
};

type AstNode = { id?: number; name?: string; [key: string]: unknown };
/** The name of the AST node `id` (a state variable), searched depth-first. */
function astName(node: unknown, id: number): string | undefined {
  if (node === null || typeof node !== "object") return undefined;
  if ((node as AstNode).id === id && typeof (node as AstNode).name === "string") return (node as AstNode).name;
  for (const child of Object.values(node as object)) {
    const found = astName(child, id);
    if (found) return found;
  }
  return undefined;
}

/**
 * The EXTCODEHASH AppAuth has when deployed at `address` by the Ignition module (app id = its own
 * address): the compiled runtime code with its one immutable, `_appId`, set to `address`. Throws
 * when the artifact is missing (run `npm run compile`) or AppAuth has other immutables.
 */
export function appAuthCodeHash(address: string): string {
  const dir = path.join(ARTIFACTS, "contracts", "AppAuth.sol");
  let buildInfo;
  try {
    const dbg = JSON.parse(fs.readFileSync(path.join(dir, "AppAuth.dbg.json"), "utf8")) as { buildInfo: string };
    buildInfo = JSON.parse(fs.readFileSync(path.resolve(dir, dbg.buildInfo), "utf8"));
  } catch (err) {
    throw new Error(`cannot read AppAuth's compiled artifact (run npm run compile, or give --app-auth-code-hash): ${(err as Error).message}`);
  }
  const runtime = buildInfo.output.contracts["contracts/AppAuth.sol"].AppAuth.evm.deployedBytecode;
  const code = Buffer.from(runtime.object, "hex");
  const value = Buffer.from(zeroPadValue(address, 32).slice(2), "hex");
  for (const [id, refs] of Object.entries(runtime.immutableReferences as Record<string, { start: number; length: number }[]>)) {
    const name = astName(buildInfo.output.sources["contracts/AppAuth.sol"].ast, Number(id));
    if (name !== "_appId") throw new Error(`AppAuth has an immutable ${name ?? id} the verifier cannot fill in: give --app-auth-code-hash`);
    for (const { start, length } of refs) value.copy(code, start, 0, length);
  }
  return keccak256(code);
}
