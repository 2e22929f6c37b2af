// Chipotle-style action (no main, top-level await): the frozen Lit namespace, the action's public key
// in Chipotle's format (0x + 33-byte compressed), and a response set as a JSON string, which the
// server parses into JSON as Chipotle's does.
const publicKey = await Lit.Actions.getLitActionPublicKey({});
const address = await LitActions.getLitActionWalletAddress({});
let assignmentThrew = false;
try {
  (() => {
    "use strict";
    Lit.Actions = {};
  })();
} catch (e) {
  assignmentThrew = e instanceof TypeError;
}
LitActions.setResponse({
  response: JSON.stringify({
    same: Lit.Actions === LitActions,
    frozen: Object.isFrozen(Lit) && Object.isFrozen(LitActions),
    assignmentThrew,
    compressed: /^0x0[23][0-9a-f]{64}$/.test(publicKey),
    matchesAddress: ethers.computeAddress(publicKey).toLowerCase() === address, // Chipotle answers the address in lowercase hex
    imports: Lit.Actions.showImportDetails(),
  }),
});
