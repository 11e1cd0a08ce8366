/**
 * Runs once per test run: a PostgreSQL server (private cluster unless TEST_DATABASE_URL is
 * given) with a migrated template database. Each test file then gets its own database cloned
 * from it (test/support/database.ts).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS_DIR, SCHEMA_PATH } from './migrate.js';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
let cluster: PostgresCluster | undefined;
let template: { admin: string; name: string } | undefined;

export async function setup(project: TestProject): Promise<void> {
  const adminUrl = process.env.TEST_DATABASE_URL || (cluster = await startPostgresCluster()).url;
  const name = `wp_template_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  template = { admin: adminUrl, name };
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${name}`;
  // The WASM schema engine must not run inside vitest's module runner: a child process migrates.
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(HERE, 'migrate-child.ts'), 'apply', templateUrl.toString(), MIGRATIONS_DIR, SCHEMA_PATH],
    { encoding: 'utf8' },
  );
  const result = JSON.parse(out.trim().split('\n').pop()!) as { ok: boolean; error?: string };
  if (!result.ok) throw new Error(`migrating the template database failed: ${result.error}`);

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', name);
}

export async function teardown(): Promise<void> {
  if (template && !cluster) {
    const admin = new pg.Client({ connectionString: template.admin });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template.name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  await cluster?.stop();
}
