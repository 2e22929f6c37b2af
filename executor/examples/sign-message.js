// Signs params.message (EIP-191) with the wallet params.pkpId; the key never leaves the run.
async function main({ pkpId, message }) {
  const privateKey = await Lit.Actions.getPrivateKey({ pkpId });
  const wallet = new ethers.Wallet(privateKey);
  const signature = await wallet.signMessage(message);
  return { address: wallet.address, signature, recovered: ethers.verifyMessage(message, signature) };
}
