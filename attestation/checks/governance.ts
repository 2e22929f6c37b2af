import { Contract, getAddress, Interface, keccak256, ZeroAddress, type Provider } from "ethers";
import { docJson, fail, pass, skip, type Evidence, type Outcome } from "../evidence";
import { appAuthCodeHash, SAFE_CODE, type GovernancePins } from "../pins";
import { bareHex, InfoDoc, PATHS, type CheckResult } from "../types";

const APP_AUTH_ABI = ["function allowedComposeHashes(bytes32 composeHash) view returns (bool)", "function owner() view returns (address)"];
const SAFE_ABI = [
  "function getThreshold() view returns (uint256)",
  "function getOwners() view returns (address[])",
  "function getModulesPaginated(address start, uint256 pageSize) view returns (address[] array, address next)",
];
const SENTINEL = "0x0000000000000000000000000000000000000001";
const SAFE_EVENTS = new Interface(["event SafeSetup(address indexed initiator, address[] owners, uint256 threshold, address initializer, address fallbackHandler)"]);
const SAFE_SETUP = SAFE_EVENTS.getEvent("SafeSetup")!.topicHash;

export const GOVERNANCE_CHECKS = [
  "governance.app-contract",
  "governance.app-auth-code",
  "governance.owner",
  "governance.safe-code",
  "governance.safe-threshold",
  "governance.safe-owners",
  "governance.compose-hash-allowed",
] as const;
type Check = (typeof GOVERNANCE_CHECKS)[number];

/** The governance contract named by `/info`: `0x` followed by the app id. */
function contractOf(ev: Evidence): string {
  const appId = bareHex(docJson(ev, PATHS.info, InfoDoc).app_id);
  if (!/^[0-9a-f]{40}$/.test(appId)) throw new Error(`app_id ${JSON.stringify(appId)} is not an address without 0x (40 hex)`);
  return getAddress(`0x${appId}`);
}

/**
 * Whether the contract `safe` is a genuine Safe whose getters tell the truth: a SafeProxy (pinned
 * code) delegating to a known Safe singleton, with no module (modules act without signatures), set
 * up without a delegatecall (which could have written owners or modules that no getter lists).
 */
async function safeCode(provider: Provider, safe: string): Promise<Outcome> {
  const proxyHash = keccak256(await provider.getCode(safe));
  if (proxyHash !== SAFE_CODE.proxy) return fail(`AppAuth's owner ${safe} is not a Safe: its code hashes to ${proxyHash}, not the SafeProxy's ${SAFE_CODE.proxy}`);
  const singleton = getAddress(`0x${(await provider.getStorage(safe, 0)).slice(-40)}`);
  const release = SAFE_CODE.singletons.get(keccak256(await provider.getCode(singleton)));
  if (!release) return fail(`AppAuth's owner ${safe} is a SafeProxy whose singleton ${singleton} is not a Safe release this verifier knows (${[...SAFE_CODE.singletons.values()].join(", ")})`);
  const [modules] = await new Contract(safe, SAFE_ABI, provider).getModulesPaginated(SENTINEL, 10);
  if (modules.length) return fail(`the Safe ${safe} has module(s) ${modules.join(", ")} enabled: a module acts as the Safe without the owners' signatures`);
  const setups = await provider.getLogs({ address: safe, topics: [SAFE_SETUP], fromBlock: 0 });
  if (setups.length !== 1) return fail(`the Safe ${safe} has ${setups.length} SafeSetup events, not one: cannot tell how it was set up`);
  const initializer: string = SAFE_EVENTS.parseLog(setups[0])!.args.initializer;
  if (initializer !== ZeroAddress) return fail(`the Safe ${safe} was set up with a delegatecall to ${initializer}, which could have written any of its storage (owners or modules no getter lists)`);
  return pass(`${safe} is a SafeProxy of ${release}, set up without a delegatecall, with no module enabled`);
}

/**
 * Governance, read from the chain: 0x + app_id is a contract whose runtime code is AppAuth's (a stub
 * answering allowedComposeHashes as it likes fails here, and nothing else is asked of it), owned by
 * the expected Safe, whose code is a genuine Safe with the expected threshold and owners; then that
 * AppAuth allows the compose hash. A check whose pin is not given, or whose premise failed, is
 * skipped with the reason; all are skipped without a chain to ask.
 */
export async function governanceChecks(ev: Evidence, provider: Provider | undefined, pins: GovernancePins = {}): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const report = (check: Check, outcome: Outcome) => results.push({ check, ...outcome }) && outcome.status === "pass";
  if (!provider) {
    for (const check of GOVERNANCE_CHECKS) report(check, skip("no chain to ask: give --rpc-url <url> (or VESTA_VERIFY_RPC_URL)"));
    return results;
  }
  try {
    const address = contractOf(ev);
    const chain = `chain ${(await provider.getNetwork()).chainId}`;
    const code = await provider.getCode(address);
    if (!report("governance.app-contract", code === "0x" ? fail(`no contract at 0x + app_id = ${address} on ${chain}`) : pass(`0x + app_id = ${address} is a contract on ${chain}`))) {
      for (const check of GOVERNANCE_CHECKS.slice(1)) report(check, skip(`not asked: no contract at ${address}`));
      return results;
    }

    let expected = pins.appAuthCodeHash?.toLowerCase();
    const source = expected ? "the pinned --app-auth-code-hash" : "AppAuth compiled from contracts/AppAuth.sol (appId = its own address)";
    expected ??= appAuthCodeHash(address);
    const actual = keccak256(code);
    const isAppAuth = report(
      "governance.app-auth-code",
      actual === expected ? pass(`the runtime code of ${address} hashes to ${actual}: ${source}`) : fail(`the runtime code of ${address} hashes to ${actual}, not ${expected} (${source}): it is not AppAuth, and what it answers proves nothing`),
    );
    const notAppAuth = skip(`not asked: ${address} is not the pinned AppAuth`);
    const appAuth = new Contract(address, APP_AUTH_ABI, provider);

    const owner = isAppAuth ? getAddress(await appAuth.owner()) : undefined;
    const ownerIsContract = owner !== undefined && (await provider.getCode(owner)) !== "0x";
    report(
      "governance.owner",
      !owner ? notAppAuth
        : !ownerIsContract ? fail(`AppAuth's owner ${owner} is an externally owned account: one key alone can allow any compose hash (governance must be a Safe)`)
        : !pins.safe ? skip(`AppAuth's owner is ${owner}; give --safe <address> (VESTA_VERIFY_SAFE) to pin the expected Safe`)
        : owner !== getAddress(pins.safe) ? fail(`AppAuth's owner is ${owner}, not the expected Safe ${getAddress(pins.safe)}`)
        : pass(`AppAuth's owner is the expected Safe ${owner}`),
    );
    const isSafe = report("governance.safe-code", !owner ? notAppAuth : !ownerIsContract ? skip(`not asked: the owner ${owner} is not a contract`) : await safeCode(provider, owner));

    const notSafe = skip(`not asked: AppAuth's owner is not a verified Safe`);
    const safe = isSafe ? new Contract(owner!, SAFE_ABI, provider) : undefined;
    const owners: string[] = safe ? (await safe.getOwners()).map((o: string) => getAddress(o)) : [];
    const threshold = safe ? Number(await safe.getThreshold()) : 0;
    report(
      "governance.safe-threshold",
      !safe ? notSafe
        : pins.safeThreshold === undefined ? skip(`the Safe needs ${threshold} of ${owners.length} owners; give --safe-threshold <n> (VESTA_VERIFY_SAFE_THRESHOLD) to pin it`)
        : threshold !== pins.safeThreshold ? fail(`the Safe needs ${threshold} of ${owners.length} owners, not the expected ${pins.safeThreshold}`)
        : pass(`the Safe needs ${threshold} of ${owners.length} owners, as expected`),
    );
    const want = (pins.safeOwners ?? []).map((o) => getAddress(o));
    const missing = want.filter((o) => !owners.includes(o));
    const extra = owners.filter((o) => !want.includes(o));
    report(
      "governance.safe-owners",
      !safe ? notSafe
        : !pins.safeOwners ? skip(`the Safe's owners are ${owners.join(", ")}; give --safe-owners <a,b,...> (VESTA_VERIFY_SAFE_OWNERS) to pin them`)
        : missing.length || extra.length ? fail(`the Safe's owners are ${owners.join(", ")}${missing.length ? `; expected but missing: ${missing.join(", ")}` : ""}${extra.length ? `; not expected: ${extra.join(", ")}` : ""}`)
        : pass(`the Safe's owners are the ${owners.length} expected: ${owners.join(", ")}`),
    );

    const hash = `0x${bareHex(docJson(ev, PATHS.info, InfoDoc).compose_hash)}`;
    const allowed = isAppAuth && ((await appAuth.allowedComposeHashes(hash)) as boolean);
    report(
      "governance.compose-hash-allowed",
      !isAppAuth ? notAppAuth
        : allowed ? pass(`allowedComposeHashes(${hash.slice(0, 18)}…) is true on ${address}`)
        : fail(`allowedComposeHashes(${hash}) is false on ${address}: the compose hash is not whitelisted (propose it through the owner Safe)`),
    );
  } catch (err) {
    for (const check of GOVERNANCE_CHECKS.slice(results.length)) report(check, fail((err as Error).message));
  }
  return results;
}
