/**
 * An embedded service that cannot be brought back stops `npm start` (invariant 10): it does not
 * run on half-alive, answering /healthz while it can do nothing. The process logs a fatal line
 * naming the service and the log file to read, stops the other service, and exits with code 1,
 * without waiting out the workers' grace period for the service that is gone:
 * - redis-server: its binary made to fail from some point on (REDIS_SERVER_BIN, a wrapper), then
 *   the running server killed;
 * - PostgreSQL: its data directory made unusable (mode 0777, which PostgreSQL refuses), then the
 *   postmaster killed.
 */
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../../src/services/child-process.js';
import { freePort } from '../../src/services/free-port.js';
import { waitFor } from '../support/wait.js';
import { removeDataDir, startProduct, type ProductProcess } from './support/product.js';

describe('npm start when an embedded service cannot be restarted', () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-lost-'));
  const dataDir = path.join(base, 'data');
  const refuse = path.join(base, 'refuse-redis');
  const wrapper = path.join(base, 'redis-server');
  const started: ProductProcess[] = [];
  let port: number;
  /** Few attempts: the test waits for the give-up, not for the default 30 s of backoff. */
  const env = { CRAWLER_HUMANIZE: 'false', REDIS_SERVER_BIN: wrapper, EMBEDDED_RESTART_ATTEMPTS: '3' };

  beforeAll(async () => {
    port = await freePort();
    writeFileSync(wrapper, `#!/bin/sh\n# redis-server, until the test forbids it\n[ -e '${refuse}' ] && exit 1\nexec redis-server "$@"\n`, { mode: 0o700 });
  });
  afterAll(async () => {
    for (const p of started) await p.kill();
    await removeDataDir(dataDir);
    rmSync(base, { recursive: true, force: true });
  });

  const redisPid = () => Number(readFileSync(path.join(dataDir, 'redis/redis.pid'), 'utf8').trim());
  const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postgres/data/postmaster.pid'), 'utf8').split('\n')[0]);

  /**
   * Starts the platform, kills the service's server after `breakIt`, and waits for the process to
   * end; also the pids both servers had.
   */
  async function loseService(service: 'redis' | 'postgres', breakIt: () => void) {
    const p = await startProduct({ dataDir, port, env });
    started.push(p);
    const pids = { redis: redisPid(), postgres: postmasterPid() };
    breakIt();
    process.kill(pids[service], 'SIGKILL');
    const { code } = await p.exited;
    return { p, code, pids, fatal: p.lines().filter((l) => l.level === 60) };
  }

  it('exits with code 1 naming redis and its log when the redis-server cannot start again', async () => {
    const { p, code, pids, fatal } = await loseService('redis', () => writeFileSync(refuse, '')).finally(() => rmSync(refuse, { force: true }));
    expect(code).toBe(1);
    const log = path.join(dataDir, 'redis/redis.log');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ service: 'redis', log, attempts: 3 });
    expect(fatal[0]!.msg).toContain('redis');
    expect(fatal[0]!.msg).toContain(log);
    expect(p.lines().filter((l) => l.msg.startsWith('embedded redis-server did not start again'))).toHaveLength(3);
    // It stopped the database on its way out, without waiting for what needed Redis.
    expect(p.lines().some((l) => /outlived the grace period|deadline passed/.test(l.msg))).toBe(false);
    expect(p.lines().at(-1)?.msg).toBe('stopped');
    await waitFor(() => !alive(pids.postgres), { message: 'PostgreSQL stopped' });
  }, 180_000);

  it('exits with code 1 naming postgres and its log when PostgreSQL cannot start again', async () => {
    const cluster = realpathSync(path.join(dataDir, 'postgres'));
    const data = path.join(cluster, 'data');
    const { p, code, pids, fatal } = await loseService('postgres', () => chmodSync(data, 0o777)).finally(() => chmodSync(data, 0o700));
    expect(code).toBe(1);
    const log = path.join(cluster, 'server.log');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ service: 'postgres', log, attempts: 3 });
    expect(fatal[0]!.msg).toContain('postgres');
    expect(fatal[0]!.msg).toContain(log);
    // The server's own log says why.
    expect(readFileSync(log, 'utf8')).toMatch(/has invalid permissions/);
    expect(p.lines().some((l) => /outlived the grace period|deadline passed/.test(l.msg))).toBe(false);
    await waitFor(() => !alive(pids.redis), { message: 'redis-server stopped' });
  }, 180_000);
});
