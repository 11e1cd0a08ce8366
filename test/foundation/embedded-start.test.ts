/**
 * The embedded default of `npm start`: no REDIS_URL and no DATABASE_URL → a private redis-server
 * and PGlite under DATA_DIR; /healthz answers; stopped and started again it keeps its data; a
 * second process against the same DATA_DIR is refused with a message saying to set DATABASE_URL.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';

const DASHBOARD_DOMAIN_METRICS: string[] = JSON.parse(readFileSync(new URL('../../dashboards/grafana/domain-metrics.json', import.meta.url), 'utf8'));

describe('embedded services (npm start)', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-embedded-'));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    ADMIN_PASSWORD: TEST_ADMIN.password,
    CRAWL_SITE: 'fixture',
  };
  let running: PlatformProcess | undefined;

  afterAll(async () => {
    await running?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts Redis and PGlite itself, answers /healthz, and keeps its data across a restart', async () => {
    running = await spawnPlatform('all', env, { startTimeoutMs: 90_000 });
    expect(running.output()).toContain('embedded redis-server started');
    expect(running.output()).toContain('embedded PGlite started');
    expect(running.output()).toMatch(/Log in\s+user "admin"/);
    const api = new ApiClient(running.apiUrl!);
    expect((await api.get('/healthz')).status).toBe(200);
    expect((await api.get('/readyz')).status).toBe(200);
    const token = await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
    expect((await api.post('/api/auth/logout')).status).toBe(204);

    // A second process against the same DATA_DIR is refused.
    const second = await spawnPlatform('all', env, { startTimeoutMs: 30_000 }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(second).toMatch(/set DATABASE_URL/);

    expect(await running.stop()).toBe(0);
    // The data is on disk: the migration history and the admin user.
    const db = await PGlite.create(path.join(dataDir, 'pglite'));
    const migrations = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL');
    expect(migrations.rows[0]!.n).toBeGreaterThan(0);
    const users = await db.query<{ username: string }>('SELECT username FROM users');
    expect(users.rows.map((r) => r.username)).toEqual(['admin']);
    await db.close();

    running = await spawnPlatform('all', env, { startTimeoutMs: 90_000 });
    expect(running.output()).not.toContain('migrations applied');
    const again = new ApiClient(running.apiUrl!, token);
    // The logout recorded in Redis before the restart still holds (AOF).
    expect((await again.get('/api/queues')).body.error.code).toBe('token_revoked');
    await again.login(TEST_ADMIN.username, TEST_ADMIN.password);
    expect((await again.get('/api/queues')).status).toBe(200);

    // Every role runs: /metrics exports each domain metric the Grafana dashboard plots.
    const text = (await again.get('/metrics')).body as string;
    const missing = DASHBOARD_DOMAIN_METRICS.filter((name) => !text.includes(`# TYPE ${name} `));
    expect(missing).toEqual([]);
    expect(await running.stop()).toBe(0);
    running = undefined;
  }, 240_000); // two starts of every role, with Chromium, on a busy machine
});
