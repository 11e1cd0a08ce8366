/**
 * The HTTP server of a worker-only process, in process, on a real Redis and PostgreSQL: health,
 * readiness (503 naming Redis while it is down, ready again once it is back) and metrics, nothing
 * else; and what a PORT in use does: a worker-only process outside production takes another free
 * port and says so, while the API, and any process in production, stop the start naming PORT.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { listInstances } from '../../src/coordination/instance-registry.js';
import { createLogger } from '../../src/logging/logger.js';
import type { RoleName } from '../../src/runtime/roles.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const METRICS_TOKEN = 'worker-http-scrape-token-0123456789abcdef';

describe('the HTTP server of a worker-only process', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  /** A program holding a port, as another process would. */
  let holder: net.Server;
  let busyPort: number;
  const running: PlatformHandle[] = [];
  let started = 0;

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    busyPort = (holder.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const p of running) await p.stop();
    holder.close();
    await redis.destroy();
    await db.drop();
  });

  /** Starts a process of `roles`, its log lines kept. */
  async function start(roles: RoleName[], env: Record<string, string> = {}) {
    const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const config = loadConfig(testEnv(redis, db, { METRICS_TOKEN, LOG_LEVEL: 'info', INSTANCE_ID: `worker-http-${++started}`, ...env }));
    const platform = startPlatform({ roles, config, logger: createLogger(config, sink) });
    void platform.then((p) => running.push(p)).catch(() => undefined);
    return { platform, lines };
  }

  it('answers health, readiness and metrics on its own port, 404 for the rest, and is not ready while Redis is down', async () => {
    const platform = await (await start(['pools'])).platform;
    expect(platform.apiUrl).toBeUndefined();
    const http = new ApiClient(platform.httpUrl);
    expect((await http.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await http.get('/readyz')).body).toEqual({ status: 'ready', dependencies: { redis: 'up', database: 'up' } });
    expect((await http.get('/metrics')).status).toBe(401);
    const metrics = await http.withToken(METRICS_TOKEN).get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('# TYPE wp_pool_refilled_rows_total counter');
    for (const path of ['/api/pools', '/api/openapi.json', '/admin/queues', '/']) {
      const res = await http.withToken(METRICS_TOKEN).get(path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe('not_found');
    }

    await redis.stop();
    const down = await waitFor(
      async () => {
        const res = await http.get('/readyz');
        return res.status === 503 ? res : undefined;
      },
      { timeoutMs: 15_000, message: 'not ready while Redis is down' },
    );
    expect(down.body.error).toMatchObject({ code: 'not_ready', field: 'redis' });
    expect(down.body.dependencies).toEqual({ redis: 'down', database: 'up' });
    expect((await http.get('/healthz')).status).toBe(200);
    redis = await redis.restart();
    await waitFor(async () => (await http.get('/readyz')).status === 200, { timeoutMs: 30_000, message: 'ready again' });
  }, 90_000);

  it('takes another free port when its PORT is in use, outside production, and says so', async () => {
    const { platform, lines } = await start(['messages'], { PORT: String(busyPort) });
    const p = await platform;
    expect(new URL(p.httpUrl).port).not.toBe(String(busyPort));
    expect((await new ApiClient(p.httpUrl).get('/healthz')).status).toBe(200);
    const warning = lines.find((l) => l.level === 40 && l.port === busyPort);
    expect(warning?.msg).toBe(
      `PORT ${busyPort} is in use (by the API of a running platform?): serving health, readiness and metrics on ${p.httpUrl} instead; set PORT to choose`,
    );
  }, 60_000);

  it('stops the start naming PORT when it is in use, for the API and for any process in production', async () => {
    const production = { NODE_ENV: 'production', PORT: String(busyPort) };
    for (const [roles, env] of [
      [['api'], { PORT: String(busyPort) }],
      [['messages'], production],
    ] as const) {
      const { platform } = await start([...roles], env);
      await expect(platform, roles.join()).rejects.toMatchObject({
        name: 'ConfigError',
        variable: 'PORT',
        message: `PORT: 127.0.0.1:${busyPort} is in use by another program (another platform process?): give this process its own PORT, or PORT=0 for any free port`,
      });
    }
    // The refused processes never joined the fleet: the registry lists the running ones only.
    const { ctx } = running[0]!;
    expect((await listInstances(ctx.redis, ctx.keys)).map((i) => i.id).sort()).toEqual(running.map((p) => p.ctx.instanceId).sort());
  }, 60_000);
});
