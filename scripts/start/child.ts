/**
 * The child side of the supervisor (supervisor.ts): starts one service, tells the supervisor its
 * URL, and stops it on SIGTERM or when the supervisor is gone (its IPC channel closes).
 */
export type Service = { url: string; close: () => Promise<void> };

/** How long a stopping service may take before the process exits anyway. */
const CLOSE_DEADLINE_MS = 8_000;

export function runChild(name: string, start: () => Promise<Service>): void {
  let stopping = false;
  let service: Service | undefined;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(code), CLOSE_DEADLINE_MS).unref();
    void (service?.close() ?? Promise.resolve()).catch((err: Error) => console.error(`Vesta ${name}: stopping failed: ${err.message}`)).finally(() => process.exit(code));
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
