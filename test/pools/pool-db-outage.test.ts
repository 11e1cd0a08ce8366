/**
 * Invariant 7 for the pools when the database goes away: on a private PostgreSQL cluster (the
 * shared one stays up for the other files), pops from the pool go on while the server is
 * stopped, their ids wait in Redis, and the consumed marks land once the server is back.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existingDatabase } from '../support/database.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { duplicates, importBatch, popMany, popOne, poolOverview, type Served } from './pool-helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Applies the migrations in a child process (the WASM schema engine must not run inside vitest). */
async function migrate(url: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/db/cli-migrate.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url, LOG_LEVEL: 'silent' },
  });
}

describe('pools with the database stopped', () => {
  let cluster: PostgresCluster;
  let redis: TestRedis;
  let t: TestPlatform;
  let url: string;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE pools_outage');
    await admin.end();
    const u = new URL(cluster.url);
    u.pathname = '/pools_outage';
    url = u.toString();
    await migrate(url);
    redis = await startTestRedis();
    t = await startTestPlatform({
      roles: ['api', 'pools'],
      redis,
      db: existingDatabase(url, 5),
      env: {
        POOL_SIZE: '100',
        POOL_REFILL_THRESHOLD: '20',
        POOL_CHECK_INTERVAL_MS: '500',
        POOL_TRIGGER_INTERVAL_MS: '20',
        DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await redis?.destroy();
    await cluster?.stop();
  });

  const consumedInDb = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM contents WHERE group_id = 2 AND status = 'consumed'`);
      return rows[0].n as number;
    } finally {
      await c.end();
    }
  };

  it('keeps popping from the pool while the DB is down; the marks land when it is back', async () => {
    await importBatch(t.api, 'contents', 2, 1, 150);
    await waitFor(async () => (await poolOverview(t.api, 'contents', 2))?.poolLength === 100, { message: 'pool not prefilled' });
    const served: Served[] = [];
    for (let i = 0; i < 10; i++) served.push((await popOne(t.api, 'contents', 2))!);
    await waitFor(async () => (await consumedInDb()) === 10, { message: 'marks before the outage did not land' });

    await cluster.stopServer();
    for (let i = 0; i < 20; i++) served.push((await popOne(t.api, 'contents', 2))!);
    served.push(...(await popMany(t.api, 'contents', 2, 30)));
    expect(served.length).toBe(60);
    expect(served.every((s) => s.source === 'pool')).toBe(true);
    const pendingKey = t.platform.ctx.keys.poolConsumed('contents', 2);
    expect(await t.platform.ctx.redis.llen(pendingKey)).toBe(50); // recorded in Redis, waiting for the DB
    await new Promise((r) => setTimeout(r, 2500)); // marking attempts meet the stopped server
    expect(await t.platform.ctx.redis.llen(pendingKey)).toBe(50);
    const overviewDown = await t.api.get('/api/pools');
    expect(overviewDown.status).toBe(503);

    await cluster.startServer();
    await waitFor(async () => (await consumedInDb()) === 60, { timeoutMs: 30_000, message: 'marks did not land after the DB came back' });
    await waitFor(async () => (await t.platform.ctx.redis.llen(pendingKey)) === 0, { message: 'consumed list not drained' });
    expect(duplicates(served.map((s) => s.id))).toEqual([]);
    const deadJobs = await t.api.get('/api/dead-jobs');
    expect(deadJobs.body.jobs?.filter?.((j: any) => j.queue === 'pool-consumed') ?? []).toEqual([]);
  });
});
