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
