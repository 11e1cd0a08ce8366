/**
 * Runs once per test run: a PostgreSQL server (private cluster unless TEST_DATABASE_URL is
 * given) with a migrated template database, and a migrated PGlite data dump. Each test file
 * then gets its own database cloned from one of them (test/support/database.ts).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    pgliteTemplateFile: string;
  }
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
let cluster: PostgresCluster | undefined;
let tmp: string | undefined;
let template: { admin: string; name: string } | undefined;

export async function setup(project: TestProject): Promise<void> {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-test-'));
  const adminUrl = process.env.TEST_DATABASE_URL || (cluster = await startPostgresCluster()).url;
  const name = `wp_template_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  template = { admin: adminUrl, name };
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${name}`;
  const file = path.join(tmp, 'pglite-template.tar');
  execFileSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'build-templates.ts'), templateUrl.toString(), file], { stdio: 'inherit' });

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', name);
  project.provide('pgliteTemplateFile', file);
}

export async function teardown(): Promise<void> {
  if (template && !cluster) {
    const admin = new pg.Client({ connectionString: template.admin });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${template.name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  await cluster?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
