/**
 * VESTA_MODE: what the relayer may run on.
 * - "production" (the default: a configuration that says nothing is taken as production, so a
 *   forgotten setting fails closed): keys from the TEE (dstack), dstack attestation evidence, Stripe
 *   billing with a gas price, no free credit, no fetches to private addresses. Anything else stops the
 *   boot with one message listing every problem.
 * - "development" (`npm start`, the tests): the local key provider, development evidence, local
 *   billing with free credit, and the other conveniences of one machine.
 */
export const VESTA_MODES = ["development", "production"] as const;
export type VestaMode = (typeof VESTA_MODES)[number];

export type ModeChecked = {
  keyProvider: "local" | "dstack";
  attestationSource: "development" | "dstack";
  fetchAllowPrivate: boolean;
};

/** What a production configuration must not use (billing's own checks are in billing/config.ts). */
export function productionProblems(c: ModeChecked): string[] {
  const problems: string[] = [];
  if (c.keyProvider === "local") problems.push("VESTA_KEY_PROVIDER=local: the local key provider (keys from a file on disk) exists only with VESTA_MODE=development; production derives keys in the TEE (dstack)");
  if (c.attestationSource === "development") problems.push("VESTA_ATTESTATION_SOURCE=development: development evidence (made up, no TEE) exists only with VESTA_MODE=development");
  if (c.fetchAllowPrivate) problems.push("VESTA_ACTION_FETCH_PRIVATE=true: actions reaching private and loopback addresses exists only with VESTA_MODE=development");
  return problems;
}
