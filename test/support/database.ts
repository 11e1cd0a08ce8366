/**
 * A fresh PostgreSQL database per test file: CREATE DATABASE ... TEMPLATE the migrated template
 * of the run (test/support/global-setup.ts), dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  /** Connections the platform under test may open to it. */
  poolSize: number;
  /** One statement on a connection of its own (seeding rows, reading a count): its rows. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** One statement on a connection of its own to `url`, closed afterwards. */
async function queryOnce<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** `empty: true` gives a database without the migrations (for migration tests). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `wp_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  await queryOnce(adminUrl, options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${inject('pgTemplate')}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    poolSize: 10,
    query: (text, values) => queryOnce(url.toString(), text, values),
    drop: () => (dropped ??= queryOnce(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined)),
  };
}

/** A database the test made itself (another cluster, a proxy in front): never dropped here. */
export function existingDatabase(url: string, poolSize: number): TestDatabase {
  return { url, poolSize, query: (text, values) => queryOnce(url, text, values), drop: async () => undefined };
}
