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

/** The largest VESTA_REPLICAS accepted (a typo guard, not a capacity limit). */
export const MAX_REPLICAS = 1000;

/**
 * VESTA_REPLICAS: how many processes of this service share one deployment. More than one needs the
 * shared database (DATABASE_URL, PostgreSQL): the SQLite files under the data directory belong to one
 * process, so replicas on them would each see their own runs, triggers and billing ledger. Refused in
 * both modes (no development convenience makes replicas on private files correct).
 */
export function replicaProblems(replicas: number, databaseUrl: string | undefined): string[] {
  if (replicas > 1 && !databaseUrl) {
    return [`DATABASE_URL: required with VESTA_REPLICAS=${replicas} (replicas share their state through PostgreSQL; without it each would keep its own SQLite files under the data directory)`];
  }
  return [];
}

/** The error message that stops a boot: the service, its mode, and every problem on its own line. */
export function bootProblemsMessage(service: string, mode: VestaMode, modeWasSet: boolean, problems: string[]): string {
  return `bad ${service} environment (VESTA_MODE=${mode}${modeWasSet ? "" : ", the default"}):\n  - ${problems.join("\n  - ")}`;
}
