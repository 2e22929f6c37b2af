import type { ChildProcess } from "node:child_process";

/** Waits until `child` prints `marker` (stdout or stderr), or fails with what it printed. */
export function waitForOutput(child: ChildProcess, marker: string | RegExp, timeoutMs: number): Promise<string> {
  const seen = (out: string) => (typeof marker === "string" ? out.includes(marker) : marker.test(out));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no "${marker}" within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (seen(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before "${marker}":\n${out}`));
    });
  });
}
