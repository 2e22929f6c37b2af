import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import type { StoreLocation } from "../../storage";
import { required } from "./required";

export type TempPostgres = { url: string; stop: () => void };
export type TempDatabase = { url: string; stop: () => Promise<void> };

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
  // Below Linux's ephemeral range (32768 and up), where a client connection may hold any port; tried again on another port when taken.
  let port = 0;
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    // cwd: a directory the postgres user may enter (the caller's may be private, e.g. a mutation-testing sandbox)
    execFileSync(asRoot ? "runuser" : cmd, asRoot ? ["-u", "postgres", "--", cmd, ...args] : args, { stdio: "pipe", timeout: 60_000, cwd: os.tmpdir() });
  try {
    if (asRoot) execFileSync("chown", ["postgres", dir], { stdio: "pipe" });
    run(initdb, ["-D", path.join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    for (let attempt = 1; ; attempt++) {
      port = 20_000 + Math.floor(Math.random() * 12_000);
      try {
        run(pgCtl, ["-D", path.join(dir, "data"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-w", "-l", path.join(dir, "log"), "start"]);
        break;
      } catch (err) {
        if (attempt >= 5) throw err;
      }
    }
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

/** One cluster for the whole test process (started on first use, stopped at exit), or why there is none. */
let cluster: { pg?: TempPostgres; error?: Error } | undefined;
function sharedCluster(): TempPostgres {
  if (!cluster) {
    try {
      const pg = startPostgres();
      cluster = { pg };
      process.once("exit", () => pg.stop());
    } catch (err) {
      cluster = { error: err as Error };
    }
  }
  if (cluster.error) throw cluster.error;
  return cluster.pg!;
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Databases made by tempDatabase, by URL, with how to drop each. */
const made = new Map<string, () => Promise<void>>();

/**
 * A fresh, empty database on the test process's one throwaway cluster (or on
 * TRIGGERS_TEST_DATABASE_URL's server): each suite gets its own without an initdb each. Under CI a
 * missing PostgreSQL fails the suite; locally it is skipped and says why (see required).
 */
export async function tempDatabase(ctx: Mocha.Context): Promise<TempDatabase> {
  const server = required(ctx, "PostgreSQL", sharedCluster);
  const name = `vesta_test_${crypto.randomBytes(6).toString("hex")}`;
  await admin(server.url, `CREATE DATABASE ${name}`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  const stop = async () => {
    made.delete(url.toString());
    await admin(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  made.set(url.toString(), stop);
  return { url: url.toString(), stop };
}

/** Drops `url` when tempDatabase made it (a harness stopping); anything else is left alone. */
export const dropTempDatabase = async (url: string | undefined): Promise<void> => {
  if (url) await made.get(url)?.();
};

/** Where the suites that run on each store put it: SQLite (the data directory) and PostgreSQL (DATABASE_URL). */
export const STORES = ["SQLite", "PostgreSQL"] as const;
export type StoreName = (typeof STORES)[number];

/** The environment that puts a service's stores on `store`: nothing for SQLite, a fresh database for PostgreSQL. */
export const storeEnv = async (ctx: Mocha.Context, store: StoreName): Promise<Record<string, string>> =>
  store === "PostgreSQL" ? { DATABASE_URL: (await tempDatabase(ctx)).url } : {};

export type TempStore = { where: StoreLocation; dir: string; drop: () => Promise<void> };

/**
 * Where a store under test lives: the SQLite file `file` in a fresh temp directory (`dir`), or, for
 * PostgreSQL, a fresh database (the directory is made all the same); `drop` removes both.
 */
export async function tempStore(ctx: Mocha.Context, store: StoreName, file: string): Promise<TempStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-store-"));
  const db = store === "PostgreSQL" ? await tempDatabase(ctx) : undefined;
  return {
    where: { sqliteFile: path.join(dir, file), ...(db ? { databaseUrl: db.url } : {}) },
    dir,
    drop: async () => {
      await db?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
