import fs from "node:fs";
import { sandboxFiles } from "../../executor/sandbox/host/sandbox-files";

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
