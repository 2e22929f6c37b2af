/**
 * Components some suites need (PostgreSQL, Chromium). Green must mean ran: under CI (`CI` set, as
 * `.ci/run` does) a missing component fails the suite with the reason; locally the suite is skipped
 * and says why, once per suite.
 */
export function required<T>(ctx: Mocha.Context, component: string, get: () => T): T {
  try {
    return get();
  } catch (err) {
    const reason = `${component} is unavailable: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${reason}\n(CI is set: a required component may not be skipped; .ci/run installs it)`);
    console.log(`      (skipped: ${reason})`);
    ctx.skip();
  }
}
