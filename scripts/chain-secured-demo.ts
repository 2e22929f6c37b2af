/**
 * A wallet-owned (ChainSecured) account end to end, against a running chain and relayer (`npm start`):
 *   node --require ts-node/register/transpile-only scripts/chain-secured-demo.ts
 *
 * The wallet creates its account on chain (newChainSecuredAccount), gets a PKP and a usage key
 * minted by EIP-712 signed requests, registers both on chain itself, creates a group listing an
 * action's CID and the PKP, and the usage key runs the action over HTTP; the PKP's signature is
 * checked. Each step is printed. Running it again with the same wallet reuses its account.
 *
 * Environment:
 *   VESTA_API_URL     the core API (default http://127.0.0.1:8000/core/v1)
 *   VESTA_RPC_URL     the chain's JSON-RPC (default http://127.0.0.1:8545)
 *   VESTA_WALLET_KEY  private key of the owning wallet, which pays its gas (default: the local
 *                     development chain's account 5, a well-known TEST key; never use it on a real network)
 */
import { LOCAL_TEST_WALLET_KEY, runChainSecuredDemo } from "./lib/chainSecured";

async function main() {
  const apiUrl = (process.env.VESTA_API_URL || "http://127.0.0.1:8000/core/v1").replace(/\/+$/, "");
  const rpcUrl = process.env.VESTA_RPC_URL || "http://127.0.0.1:8545";
  const walletKey = process.env.VESTA_WALLET_KEY || LOCAL_TEST_WALLET_KEY;
  console.log(`ChainSecured demo: API ${apiUrl}, chain ${rpcUrl}${process.env.VESTA_WALLET_KEY ? "" : " (wallet: local test account 5)"}`);
  const result = await runChainSecuredDemo({ apiUrl, rpcUrl, walletKey, log: (line) => console.log(line) });
  console.log(`Done: account 0x${result.accountHash.toString(16)}, PKP ${result.pkp}, group ${result.groupId}, action ${result.cid}.`);
}

main().catch((err) => {
  console.error(`chain-secured-demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
