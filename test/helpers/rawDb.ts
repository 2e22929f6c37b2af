import Database from "better-sqlite3";
import { Client } from "pg";
import type { StoreLocation } from "../../storage";

/**
 * SQL straight to a store's database, behind the store's back (as an older version, or an
 * operator, would have written it): `statements` run as one script; `query` answers rows. The SQL
 * must be valid on the database `where` names.
 */
export async function rawExec(where: StoreLocation, statements: string): Promise<void> {
  if (!where.databaseUrl) {
    const db = new Database(where.sqliteFile);
    try {
      db.exec(statements);
    } finally {
      db.close();
    }
    return;
  }
  const client = new Client({ connectionString: where.databaseUrl });
  await client.connect();
  try {
    await client.query(statements);
  } finally {
    await client.end();
  }
}

export async function rawQuery<T = Record<string, unknown>>(where: StoreLocation, query: string): Promise<T[]> {
  if (!where.databaseUrl) {
    const db = new Database(where.sqliteFile, { readonly: true });
    try {
      return db.prepare(query).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new Client({ connectionString: where.databaseUrl });
  await client.connect();
  try {
    return (await client.query(query)).rows as T[];
  } finally {
    await client.end();
  }
}
