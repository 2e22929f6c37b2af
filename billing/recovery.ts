import type { Logger } from "pino";
import type { Billing } from "./service";
import type { ReservationRow } from "./reservations";

/** A reservation whose holder has not been seen alive for this long (3 heartbeats) is an orphan. */
export const ORPHAN_AFTER_MS = 15_000;

/** What a write left by a dead process cost: its price in cents once its receipt is known, or "pending" (ask again at the next heartbeat). */
export type WriteOutcome = number | "pending";

/**
 * Ends the reservations a dead process left (or that a live one handed over), so that they neither
 * hold credit forever nor vanish as a charge. The rule, per kind of work:
 * - a run that started (left the queue for a sandbox: `startedAt`) is charged for the whole seconds
 *   from its start to the last heartbeat of its process (at least one second, at most its
 *   reservation): the time it may have held a sandbox; one that never started (it was still
 *   queued when its process died) is released: it held nothing;
 * - a write that recorded no transaction hash was never broadcast (the hash is recorded before the
 *   broadcast): released; one with hashes (its transaction and any replacements) is charged what
 *   `resolveWrite` finds from the receipt of the one mined
 *   (gas used, also when it reverted; 0 when it never landed), or, with no way to look, its reservation.
 */
export async function recoverOrphans(billing: Billing, resolveWrite: ((r: ReservationRow) => Promise<WriteOutcome>) | undefined, logger: Pick<Logger, "warn" | "info">): Promise<number> {
  let ended = 0;
  for (const r of await billing.reservations.orphans(billing.owner, Date.now() - ORPHAN_AFTER_MS)) {
    let charge: WriteOutcome;
    if (r.kind === "run") {
      charge = r.startedAt === null ? 0 : r.unitCents * Math.max(1, Math.ceil((r.aliveAt - r.startedAt) / 1000));
    } else if (r.txHashes.length === 0) {
      charge = 0;
    } else if (resolveWrite) {
      charge = await resolveWrite(r).catch((err: Error) => {
        logger.warn({ err: err.message, reservation: r.id }, "billing: could not look up what a recovered write cost; asked again later");
        return "pending" as const;
      });
    } else {
      charge = r.cents;
    }
    if (charge === "pending") continue;
    const neverStarted = r.kind === "run" && r.startedAt === null;
    if (await billing.endReservation(r, charge, `${r.detail} (recovered${neverStarted ? ", never started" : ""})`)) {
      ended++;
      logger.info({ reservation: r.id, customer: r.customerId, kind: r.kind, neverStarted, reservedCents: r.cents, chargedCents: Math.min(r.cents, charge) }, "billing: ended a reservation left by a stopped process");
    }
  }
  return ended;
}
