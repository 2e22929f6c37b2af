// Encrypts params.message with the wallet params.pkpId's key, then decrypts it again.
async function main({ pkpId, message }) {
  const ciphertext = await Lit.Actions.Encrypt({ pkpId, message });
  const plaintext = await Lit.Actions.Decrypt({ pkpId, ciphertext });
  return { ciphertext, plaintext, roundTrip: plaintext === message };
}
