/**
 * The child side of the supervisor (supervisor.ts): starts one service, tells the supervisor its
 * URL, and stops it on SIGTERM or when the supervisor is gone (its IPC channel closes). Stopping
 * drains: requests and runs under way get the service's shutdown deadline
 * (VESTA_SHUTDOWN_DEADLINE_MS / TRIGGERS_SHUTDOWN_DEADLINE_MS) to finish, as under `npm run
 * relayer|triggers`; what is still under way then answers 503 interrupted, billing is flushed, and
 * the process exits 0.
 */
export type Service = { url: string; close: (opts?: { deadlineMs?: number }) => Promise<void>; deadlineMs?: number };

/**
 * What a stopping service may take past its deadline (stopping the sandboxes, settling the runs
 * that ended, flushing billing, closing the stores) before the process exits anyway. The
 * supervisor waits this much longer again before it kills the child (supervisor.ts).
 */
export const CLOSE_MARGIN_MS = 10_000;

/** `start` resolves with the service and its shutdown deadline (`deadlineMs`, what its config says; none: stop at once). */
export function runChild(name: string, start: () => Promise<Service>): void {
  let stopping = false;
  let service: Service | undefined;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    const deadlineMs = service?.deadlineMs ?? 0;
    setTimeout(() => process.exit(code), deadlineMs + CLOSE_MARGIN_MS).unref();
    void (service?.close({ deadlineMs }) ?? Promise.resolve()).catch((err: Error) => console.error(`Vesta ${name}: stopping failed: ${err.message}`)).finally(() => process.exit(code));
  };
  process.on("SIGINT", () => undefined); // Ctrl-C reaches the whole group: the supervisor stops us in order
  process.once("SIGTERM", () => stop(0));
  process.once("disconnect", () => stop(0)); // the supervisor is gone
  start().then(
    (s) => {
      service = s;
      if (stopping) return void s.close().finally(() => process.exit(0));
      process.send?.({ type: "ready", url: s.url });
    },
    (err: unknown) => {
      console.error(`Vesta ${name} failed to start: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
