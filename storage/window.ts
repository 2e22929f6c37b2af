import { toNumber } from "./dialect";

/**
 * A budget of `limit` uses per sliding `windowMs`: the whole seconds until one more fits, given the
 * times of the uses within the window (oldest first; numbers or the database's bigint strings); 0
 * when one fits now. The identity store's mail budgets and the triggers store's sign-in mails count so.
 */
export function secondsUntilRoom(sentAts: readonly unknown[], limit: number, windowMs: number, now: number): number {
  if (sentAts.length < limit) return 0;
  return Math.max(1, Math.ceil((toNumber(sentAts[sentAts.length - limit]) + windowMs - now) / 1000));
}
