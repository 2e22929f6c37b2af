import fs from "node:fs";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { sandboxFiles } from "../../executor/sandbox/host/sandbox-files";
import { WarmContext } from "../../executor/sandbox/process/context";
import { readGuestSources } from "../../executor/sandbox/process/guest-bindings";
import { layoutOf } from "../../executor/sandbox/process/snapshot";

/** The sandbox processes this process started (children running the sandbox bundle). */
export function sandboxChildren(): number[] {
  const entry = sandboxFiles().entry;
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid && fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(entry) ? [Number(d)] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

/** A sandbox process's QuickJS module and warm context, built in this process (to read what a run does inside it, or time it). */
export async function warmInProcess(): Promise<{ memory: WebAssembly.Memory; warm: WarmContext }> {
  const { wasmFile, guestDir } = sandboxFiles();
  const wasm = fs.readFileSync(wasmFile);
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 16384 });
  const qjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory, wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) }));
  const warm = new WarmContext(qjs, readGuestSources(guestDir), memory, layoutOf(wasm));
  return { memory, warm };
}
