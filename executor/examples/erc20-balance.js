// Reads an ERC-20 token with ethers v5, as Chipotle's "Read from a Smart Contract" example does, on a
// chain the deployment gives actions (js_params: { chain, tokenAddress, holderAddress }).
async function main({ chain, tokenAddress, holderAddress }) {
  const provider = new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain }));
  const abi = ["function balanceOf(address owner) view returns (uint256)", "function symbol() view returns (string)", "function decimals() view returns (uint8)"];
  const token = new ethers.Contract(tokenAddress, abi, provider);
  const [balance, symbol, decimals] = await Promise.all([token.balanceOf(holderAddress), token.symbol(), token.decimals()]);
  return { holder: holderAddress, symbol, decimals, wei: balance.toString(), balance: ethers.utils.formatUnits(balance, decimals), isBigNumber: ethers.BigNumber.isBigNumber(balance) };
}
