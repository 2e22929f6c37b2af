/**
 * Contracts whose behaviour depends on the gas they are given, as runtime code (deploy with
 * `creation(runtime)`): what an estimate of the gas searches over. With no calldata a call's code
 * starts with its gas limit less 21,000, and the GAS opcode reads 2 less.
 */

/** Loops until out of gas: every call fails, burning all it was given. */
export const BURNER = "5b600056";

/** Succeeds (STOP) when it starts with at least 978,000 gas (a limit of 999,002 or more), else reverts at once. */
export const NEEDS_978K = "5a620eec5011600a57005b600080fd";

/**
 * An estimate's worst case: below 978,000 gas at the start it loops until out of gas (fails, burning
 * its limit); from 978,000 it loops while more than 5,000 is left, then succeeds (burning ~its
 * limit too). Every run of a search burns about the limit it tries.
 */
export const BURNS_EITHER_WAY = "5a620eec5011601357" + "5b5a6113881060095700" + "5b601356";

/** The least gas limit at which NEEDS_978K and BURNS_EITHER_WAY succeed. */
export const LEAST_LIMIT = 999_002;

/** Creation code that deploys `runtime` (hex without 0x, at most 255 bytes). */
export function creation(runtime: string): string {
  const len = (runtime.length / 2).toString(16).padStart(2, "0");
  return `0x60${len}600c60003960${len}6000f3${runtime}`;
}
