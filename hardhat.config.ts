import path from "node:path";
import { subtask } from "hardhat/config";
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } from "hardhat/builtin-tasks/task-names";
import type { HardhatUserConfig } from "hardhat/config";
import "@nomicfoundation/hardhat-toolbox";

// The compiler comes from the `solc` npm package (pinned in package.json), never from a download.
// Keep SOLC_VERSION equal to the `solc` dependency's version.
const SOLC_VERSION = "0.8.28";

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper();
  const solcPkg = require("solc/package.json") as { version: string };
  if (solcPkg.version !== SOLC_VERSION) {
    throw new Error(`solc npm package is ${solcPkg.version}, hardhat.config.ts pins ${SOLC_VERSION}`);
  }
  return {
    version: SOLC_VERSION,
    longVersion: require("solc").version() as string,
    compilerPath: path.join(path.dirname(require.resolve("solc/package.json")), "soljson.js"),
    isSolcJs: true,
  };
});

const config: HardhatUserConfig = {
  solidity: {
    version: SOLC_VERSION,
    // storageLayout: test/AccountConfig.chipotle.test.ts checks that AccountConfig and AccountConfigViews (run in its storage) agree.
    settings: { optimizer: { enabled: true, runs: 200 }, viaIR: true, evmVersion: "cancun", outputSelection: { "*": { "*": ["storageLayout"] } } },
  },
  networks: {
    hardhat: { allowUnlimitedContractSize: false },
    localhost: { url: process.env.VESTA_RPC_URL ?? "http://127.0.0.1:8545" },
  },
  typechain: { outDir: "typechain-types", target: "ethers-v6" },
  // A stray `.only` fails the run instead of shrinking it; under CI a pending (skipped) test fails it too.
  mocha: { timeout: 120_000, forbidOnly: true, forbidPending: Boolean(process.env.CI) },
  gasReporter: { enabled: false },
};

export default config;
