// The action's own wallet (derived from its CID): address and public key, checked against each
// other (the address as Chipotle answers it: lowercase hex), and a transaction signed with its
// private key (Lit-style: the response is set explicitly).
async function main({ to, chainId }) {
  const address = await Actions.getLitActionWalletAddress({});
  const publicKey = await Actions.getLitActionPublicKey({});
  const wallet = new ethers.Wallet(await Actions.getLitActionPrivateKey());
  const signedTx = await wallet.signTransaction({ to, value: ethers.parseEther("0.01"), nonce: 0, gasLimit: 21000, maxFeePerGas: "30000000000", maxPriorityFeePerGas: "1000000000", chainId, type: 2 });
  Actions.setResponse({ response: { address, publicKey, matches: ethers.computeAddress(publicKey).toLowerCase() === address && wallet.address.toLowerCase() === address, signedTx } });
}
