/**
 * A fresh database per test file, cloned from the migrated template of the run:
 * - 'pglite' (default for in-process tests): an in-memory PGlite loaded from the template dump,
 *   served on a local port (single connection: use a pool of 1, i.e. the platform's own client);
 * - 'postgres' (multi-process tests, and the db project): CREATE DATABASE ... TEMPLATE.
 * TEST_DB chooses the default.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { startPglite } from '../../src/db/pglite-server.js';

export type TestDbKind = 'pglite' | 'postgres';

export interface TestDatabase {
  kind: TestDbKind;
  url: string;
  /** Connections the platform may open to it (1 for PGlite). */
  poolSize: number;
  drop(): Promise<void>;
}

export function defaultDbKind(): TestDbKind {
  return process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/** `empty: true` gives a database without the migrations (for migration tests). */
export async function createTestDatabase(kind: TestDbKind = defaultDbKind(), options: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const blob = options.empty ? undefined : new Blob([readFileSync(inject('pgliteTemplateFile'))]);
    const server = await startPglite({ dataDir: 'memory://', ...(blob ? { loadDataDir: blob } : {}) });
    return { kind, url: server.url, poolSize: 1, drop: () => server.stop() };
  }
  const adminUrl = inject('pgAdminUrl');
  const name = `wp_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${inject('pgTemplate')}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    kind,
    url: url.toString(),
    poolSize: 10,
    drop: () =>
      (dropped ??= (async () => {
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await c.end();
      })()),
  };
}
