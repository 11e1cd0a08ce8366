/**
 * The supervisor of an embedded service (src/services/supervised-service.ts) on a real
 * redis-server, killed with SIGKILL as a crash or the OOM killer would:
 * - it is started again on the same port and data (a key written before the crash is there),
 *   the death and the restart are logged and counted;
 * - a service that cannot start again is given up after the episode's attempts, naming its log;
 *   so is one that keeps dying right after each restart;
 * - once the process stops, a service that is down is tried once at once, not after the backoff,
 *   and a stop in the middle of the backoff leaves nothing running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isPortFree } from '../../src/services/free-port.js';
import { pingRedis, startRedisServer, type RedisServerProcess } from '../../src/services/redis-server-process.js';
import { DEFAULT_RESTART_POLICY, type RestartPolicy } from '../../src/services/restart-budget.js';
import { SupervisedService, type SupervisedServiceOptions } from '../../src/services/supervised-service.js';
import { waitFor } from '../support/wait.js';

const PASSWORD = 'supervised-test-password';
const QUICK: RestartPolicy = { ...DEFAULT_RESTART_POLICY, attempts: 3, firstDelayMs: 20, maxDelayMs: 100, stoppingDelayMs: 20, stoppingWindowMs: 300 };

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}

describe('a supervised redis-server', () => {
  const dirs: string[] = [];
  const supervisors: SupervisedService[] = [];
  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.stop()));
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A redis-server under supervision, with the log lines it produced. */
  async function supervised(policy: RestartPolicy, start?: (port: number, dir: string) => Promise<RedisServerProcess>) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-supervised-'));
    dirs.push(dir);
    const first = await startRedisServer({ dir, password: PASSWORD, detached: true });
    const lines: Line[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Line);
        done();
      },
    });
    const options: SupervisedServiceOptions = {
      service: 'redis',
      label: 'redis-server',
      logFile: path.join(dir, 'redis.log'),
      start: () => (start ? start(first.port, dir) : startRedisServer({ dir, password: PASSWORD, detached: true, port: first.port })),
      policy,
      logger: pino({ level: 'info' }, sink),
    };
    const service = new SupervisedService(options, first);
    supervisors.push(service);
    return { service, first, dir, lines, port: first.port };
  }

  /** The pid the supervised server runs as now (from its pid file, rewritten at each start). */
  async function currentPid(port: number): Promise<number> {
    const client = new Redis({ port, host: '127.0.0.1', password: PASSWORD, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      const info = await client.info('server');
      return Number(/process_id:(\d+)/.exec(info)![1]);
    } finally {
      client.disconnect();
    }
  }

  it('starts a killed server again on the same port and data, and logs and counts it', async () => {
    const { service, first, port, lines } = await supervised(QUICK);
    const client = new Redis({ port, host: '127.0.0.1', password: PASSWORD, maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    try {
      await client.set('kept', 'across the crash');
      await first.kill();
      await waitFor(() => service.status().restarts === 1 && service.status().up, { timeoutMs: 20_000, message: 'restarted' });
      expect(await currentPid(port)).not.toBe(first.pid);
      // The same client, reconnected by itself to the same port, finds the data (AOF).
      expect(await client.get('kept')).toBe('across the crash');
      expect(service.status()).toEqual({ service: 'redis', up: true, lost: false, restarts: 1 });
      const died = lines.find((l) => l.msg.includes('exited unexpectedly'));
      expect(died).toMatchObject({ level: 50, service: 'redis', pid: first.pid, signal: 'SIGKILL' });
      expect(lines.find((l) => l.msg === 'embedded redis-server restarted')).toMatchObject({ service: 'redis', attempt: 1 });
    } finally {
      client.disconnect();
    }
  });

  it('gives up when the server cannot start again, naming its log', async () => {
    const { service, first, dir, lines } = await supervised(QUICK, (port, d) =>
      startRedisServer({ dir: d, password: PASSWORD, detached: true, port, bin: '/bin/false' }),
    );
    await first.kill();
    const lost = await service.lost;
    expect(lost).toMatchObject({ service: 'redis', logFile: path.join(dir, 'redis.log'), attempts: 3 });
    expect(lost.error.message).toMatch(/redis-server exited \(1\) while starting/);
    expect(service.status().up).toBe(false);
    expect(lines.filter((l) => l.msg.includes('did not start again'))).toHaveLength(3);
    expect(lines.at(-1)).toMatchObject({ level: 50, service: 'redis', attempts: 3, log: path.join(dir, 'redis.log') });
  });

  it('gives up on a server that dies again right after each restart', async () => {
    const { service, first, port } = await supervised(QUICK);
    await first.kill();
    for (let restarts = 1; restarts <= QUICK.attempts; restarts++) {
      await waitFor(() => service.status().restarts === restarts && service.status().up, { timeoutMs: 20_000, message: `restart ${restarts}` });
      process.kill(await currentPid(port), 'SIGKILL');
    }
    expect((await service.lost).attempts).toBe(QUICK.attempts);
    expect(service.status()).toEqual({ service: 'redis', up: false, lost: true, restarts: QUICK.attempts });
  });

  it('once the process stops, tries a server that is down at once instead of after the backoff', async () => {
    // A backoff far longer than the test's wait: only hurry() can bring it back in time.
    const { service, first, port } = await supervised({ ...QUICK, firstDelayMs: 600_000, maxDelayMs: 600_000 });
    await first.kill();
    await waitFor(() => !service.status().up, { message: 'seen down' });
    service.hurry();
    await waitFor(() => service.status().up, { timeoutMs: 20_000, message: 'restarted at once' });
    expect(await pingRedis(port, PASSWORD)).toBe(true);
  });

  it('once the process stops, tries a server that cannot start at short intervals within the stopping window, then gives it up', async () => {
    const { service, first, lines } = await supervised({ ...QUICK, firstDelayMs: 600_000, maxDelayMs: 600_000 }, (port, d) =>
      startRedisServer({ dir: d, password: PASSWORD, detached: true, port, bin: '/bin/false' }),
    );
    await first.kill();
    await waitFor(() => !service.status().up, { message: 'seen down' });
    service.hurry();
    const lost = await service.lost;
    // More than the one attempt the backoff would have allowed by now, all of them failed.
    expect(lost.attempts).toBeGreaterThan(1);
    expect(lines.filter((l) => l.msg.includes('did not start again'))).toHaveLength(lost.attempts);
  });

  it('stopped during the backoff, starts nothing more', async () => {
    const { service, first, port, lines } = await supervised({ ...QUICK, firstDelayMs: 600_000, maxDelayMs: 600_000 });
    await first.kill();
    await waitFor(() => lines.some((l) => l.msg.includes('exited unexpectedly')), { message: 'death seen' });
    await service.stop();
    expect(await isPortFree(port)).toBe(true);
    expect(service.status()).toEqual({ service: 'redis', up: false, lost: false, restarts: 0 });
  });
});
