// Sends ETH from a PKP wallet and waits for the receipt, as Chipotle's "Send ETH to an Address"
// example does (js_params: { pkpId, toAddress, amountEth, chain }).
async function main({ pkpId, toAddress, amountEth, chain }) {
  const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain }));
  const wallet = new ethers.Wallet(await Lit.Actions.getPrivateKey({ pkpId }), provider);
  const tx = await wallet.sendTransaction({ to: toAddress, value: ethers.utils.parseEther(amountEth) });
  const receipt = await tx.wait();
  return { txHash: receipt.transactionHash, from: wallet.address, to: receipt.to, amountEth, blockNumber: receipt.blockNumber, status: receipt.status, type: tx.type };
}
