import { ethers } from "hardhat";
import { Interface, TypedDataEncoder, verifyTypedData } from "ethers";
import { buildTypedData, DEFAULT_DOMAIN_NAME } from "../protocol/eip712";
import { DEFAULT_ERC1271 } from "../relayer/signed";
import { verifyTypedData as verifySignedRequest } from "../relayer/signed/eip712";
import { deploySafeInfrastructure, safeSignTypedData } from "../test/helpers/safe";
import { startStack } from "../test/helpers/relayer";
import { measure, type LoadShape, type Stats } from "./relayer";

const SHAPE: LoadShape = { concurrency: 16, maxRequests: 1500, maxMs: 6000, warmup: 100 };

/**
 * Informational: where the time of a signed request goes. create_wallet_with_signature in full
 * (schema, envelope checks, ECDSA recovery, key derivation, JSON) vs the same endpoint's
 * validation-only path (an envelope refused by its checks before any signature work), over HTTP;
 * and in-process, the verifier alone.
 */
export async function printSignatureBench() {
  console.log("== Signed requests (create_wallet_with_signature)");
  const stack = await startStack({ payerCount: 1, env: { VESTA_NEW_ACCOUNT_RATE_LIMIT: "1000000" } });
  try {
    const [, , , , , , , wallet] = await ethers.getSigners();
    const td = buildTypedData("CreateWallet", { chainId: 31337, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    const { EIP712Domain: _d, ...types } = td.types;
    const signature = await wallet.signTypedData(td.domain, types, td.message);
    const stale = { ...td, domain: { ...td.domain, chainId: 1 } }; // refused at the chainId check, before recovery
    const url = `${stack.api}/create_wallet_with_signature`;
    const headers = { "content-type": "application/json" };
    const full = await measure({ url, headers, body: JSON.stringify({ typed_data: td, signature }) }, SHAPE);
    const rejected = await measure({ url, headers, body: JSON.stringify({ typed_data: stale, signature }) }, { ...SHAPE, expectStatus: 400 });
    const row = (name: string, s: Stats) => console.log(`${name.padEnd(34)} ${s.rps.toFixed(0).padStart(6)} req/s   p50 ${s.p50.toFixed(2)} ms   p99 ${s.p99.toFixed(2)} ms`);
    row("full (verify + derive + answer)", full);
    row("validation-only (refused envelope)", rejected);
    console.log(`  ratio full/validation-only ${(full.rps / rejected.rps).toFixed(2)} (informational)`);

    const n = 300;
    const time = async (fn: () => unknown) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn();
      return (performance.now() - t0) / n;
    };
    const digest = await time(() => TypedDataEncoder.hash(td.domain, types, td.message));
    const recover = await time(() => verifyTypedData(td.domain, types, td.message, signature));
    const verify = await time(() =>
      verifySignedRequest(td, signature, { primaryType: "CreateWallet", domainName: DEFAULT_DOMAIN_NAME, chainId: 31337n, nowSeconds: Math.floor(Date.now() / 1000) }),
    );
    console.log(`  in process, per request: verifySignedRequest ${verify.toFixed(3)} ms = digest ${digest.toFixed(3)} ms + ECDSA recovery ${(recover - digest).toFixed(3)} ms + checks`);
  } finally {
    await stack.stop();
  }
  await printSafeSignatureGas();
}

/** Gas of a Safe's ERC-1271 isValidSignature (a BillingAuth signed by `threshold` owners), against the cap of the call. */
async function printSafeSignatureGas() {
  const kit = await deploySafeInfrastructure();
  const signers = (await ethers.getSigners()).map((s) => s.address);
  const erc1271 = new Interface(["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"]);
  const cells: string[] = [];
  for (const [threshold, owners] of [[2, 3], [5, 7], [10, 12]]) {
    const safe = await kit.createSafe(signers.slice(5, 5 + owners), threshold, `bench-${threshold}-${Date.now()}`);
    const td = buildTypedData("BillingAuth", { chainId: 31337, address: safe, issuedAt: Math.floor(Date.now() / 1000) });
    const signature = await safeSignTypedData(kit, safe, td, signers.slice(5, 5 + threshold));
    const { EIP712Domain: _d, ...types } = td.types;
    const data = erc1271.encodeFunctionData("isValidSignature", [TypedDataEncoder.hash(td.domain, types, td.message), signature]);
    cells.push(`${threshold}-of-${owners} ${await ethers.provider.estimateGas({ to: safe, data })} gas`);
  }
  console.log(`  ERC-1271 (Safe 1.5.0 isValidSignature, with the 21k base): ${cells.join(", ")}; cap per call ${DEFAULT_ERC1271.gasLimit} gas, ${DEFAULT_ERC1271.timeoutMs} ms`);
}
