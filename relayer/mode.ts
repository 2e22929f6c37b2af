/** VESTA_MODE (protocol/mode.ts): what production refuses. */
export { VESTA_MODES, type VestaMode } from "../protocol/mode";

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
