import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { required } from "./required";

export type TempPostgres = { url: string; stop: () => void };

/** Where Debian's postgresql package puts its server programs (not on PATH): /usr/lib/postgresql/<version>/bin. */
const DEBIAN_ROOT = "/usr/lib/postgresql";

/**
 * The path of a PostgreSQL server program: from PATH, else from the newest
 * /usr/lib/postgresql/<version>/bin (VESTA_PG_BIN_DIRS, colon-separated, replaces both: tests use it
 * to hide PostgreSQL). Throws naming what was searched.
 */
export function pgProgram(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const override = env.VESTA_PG_BIN_DIRS;
  const versions = () =>
    fs.existsSync(DEBIAN_ROOT)
      ? fs.readdirSync(DEBIAN_ROOT).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a)).map((v) => path.join(DEBIAN_ROOT, v, "bin"))
      : [];
  const dirs = override !== undefined ? override.split(":").filter(Boolean) : [...(env.PATH ?? "").split(":").filter(Boolean), ...versions()];
  for (const dir of dirs) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  throw new Error(`no ${name} in ${override !== undefined ? `VESTA_PG_BIN_DIRS (${override || "empty"})` : `PATH nor ${DEBIAN_ROOT}/<version>/bin`} (install Debian's postgresql package)`);
}

/**
 * A PostgreSQL for tests: TRIGGERS_TEST_DATABASE_URL if set, else a throwaway cluster started with
 * initdb/pg_ctl (as the `postgres` user when running as root). Throws with the reason when it cannot.
 */
export function startPostgres(): TempPostgres {
  if (process.env.TRIGGERS_TEST_DATABASE_URL) return { url: process.env.TRIGGERS_TEST_DATABASE_URL, stop: () => {} };
  const initdb = pgProgram("initdb");
  const pgCtl = pgProgram("pg_ctl");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-pg-"));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    // cwd: a directory the postgres user may enter (the caller's may be private, e.g. a mutation-testing sandbox)
    execFileSync(asRoot ? "runuser" : cmd, asRoot ? ["-u", "postgres", "--", cmd, ...args] : args, { stdio: "pipe", timeout: 60_000, cwd: os.tmpdir() });
  try {
    if (asRoot) execFileSync("chown", ["postgres", dir], { stdio: "pipe" });
    run(initdb, ["-D", path.join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    run(pgCtl, ["-D", path.join(dir, "data"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-w", "-l", path.join(dir, "log"), "start"]);
  } catch (err) {
    const e = err as Error & { stderr?: Buffer };
    const detail = e.stderr?.toString().trim() || e.message;
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a throwaway cluster with ${initdb}: ${detail.slice(0, 500)}`);
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // Once: a suite that runs again after a failed start still holds the cluster it stopped before.
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run(pgCtl, ["-D", path.join(dir, "data"), "-m", "immediate", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** startPostgres() for a suite: under CI a failure fails the suite; locally the suite skips and says why. */
export const tempPostgres = (ctx: Mocha.Context): TempPostgres => required(ctx, "PostgreSQL", startPostgres);
