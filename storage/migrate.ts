import { sql, Migrator, type Kysely, type Migration } from "kysely";
import type { Dialect } from "./dialect";

/**
 * One step of a store's schema. Steps never change once released: a change of schema is a new
 * step, named after the last (names sort in the order they run).
 */
export type MigrationStep = (db: Kysely<any>, dialect: Dialect) => Promise<void>;

/** A store's schema: its name (its migration table is `<name>_migrations`) and its steps, by name. */
export type StoreSchema = { name: string; steps: Record<string, MigrationStep> };

/** The database holds a store's schema this code cannot run with (a newer version's, or a failed step). */
export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/**
 * Brings the store's tables to the latest step: the steps not yet recorded in `<name>_migrations`
 * run in name order, all of them and their records in one transaction (a failed step leaves the
 * database as it was). Concurrent boots on one PostgreSQL take turns (Kysely's migration lock). A
 * database migrated by a newer version (a step unknown here) is refused: running old code on a
 * newer schema is how data gets lost.
 */
export async function migrate(db: Kysely<any>, dialect: Dialect, schema: StoreSchema): Promise<string[]> {
  const steps: Record<string, Migration> = {};
  for (const [name, up] of Object.entries(schema.steps)) steps[name] = { up: (trx) => up(trx, dialect) };
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => steps },
    migrationTableName: `${schema.name}_migrations`,
    migrationLockTableName: `${schema.name}_migrations_lock`,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === "Error")?.migrationName;
    const message = error instanceof Error ? error.message : String(error);
    if (/previously executed migration .* is missing/.test(message)) {
      throw new MigrationError(`the ${schema.name} store's schema (${dialect.name}) cannot be brought up to date: it was migrated by a newer version of Vesta (${message}); run that version, or restore a backup made before it`);
    }
    if (failed) throw new MigrationError(`the ${schema.name} store's schema (${dialect.name}) cannot be brought up to date: step ${failed} failed: ${message}`);
    throw new MigrationError(`the ${schema.name} store's database (${dialect.name}) cannot be opened: ${message}`); // unreachable, refused, bad credentials
  }
  return results.filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Whether `table` has `column` (both databases), for steps that add a column older databases may already have. */
export async function hasColumn(db: Kysely<any>, dialect: Dialect, table: string, column: string): Promise<boolean> {
  const rows =
    dialect.name === "postgres"
      ? await sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`.execute(db)
      : await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db);
  return rows.rows.some((r) => r.name === column);
}
