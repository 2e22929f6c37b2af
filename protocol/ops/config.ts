/** The environment variables of operations both services share (the relayer's VESTA_*, the triggers service's TRIGGERS_*). */
import { z } from "zod";

/** The default shutdown deadline (ms): what orchestrators commonly wait after SIGTERM (30 s) minus a margin. */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 20_000;

/** A metrics bearer token: optional, at least 32 characters (it guards operational data), printable ASCII. */
export const metricsToken = (name: string) =>
  z
    .string()
    .min(32, `${name} must be at least 32 characters (e.g. openssl rand -hex 32)`)
    .max(512)
    .regex(/^[\x21-\x7e]+$/, `${name} must be printable ASCII without spaces`)
    .optional();

export const shutdownDeadline = (name: string) => z.coerce.number().int(`${name} must be an integer`).min(0).max(600_000, `${name} is at most 600000 (10 min)`).default(DEFAULT_SHUTDOWN_DEADLINE_MS);
