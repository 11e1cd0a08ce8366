/**
 * Invariant 1 (no job is lost) at the level of the worker factory:
 * - a worker process SIGKILLed mid-job: another worker completes the job (stalled recovery),
 *   and it appears once in completed;
 * - Redis restarted (AOF everysec) under a running worker: queued and delayed jobs survive and
 *   the worker resumes by itself;
 * - a worker closed right after Redis came back (its blocking connection still reconnecting,
 *   where BullMQ's own close never returns: BullMQ #4656) still closes, so a process can stop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { connectionOptions } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { createKeys } from '../../src/redis/keys.js';
import { createWorker } from '../../src/queues/create-worker.js';
import { spawnJobWorker } from '../support/job-worker-process.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const keys = createKeys('wp');

describe('worker faults', () => {
  let redis: TestRedis;
  let probe: Redis;

  beforeAll(async () => {
    redis = await startTestRedis();
    probe = new Redis(redis.url, { maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
  });
  afterAll(async () => {
    probe.disconnect();
    await redis.destroy();
  });

  it('a job whose worker is SIGKILLed mid-run is completed by another worker, once', async () => {
    const env = { REDIS_URL: redis.url, WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' };
    const queue = new Queue('maintenance', { connection: { url: redis.url }, prefix: keys.bullPrefix });
    const job = await queue.add('slow', { task: 'sleep:4000' }, { attempts: 3 });

    const first = await spawnJobWorker(env);
    await waitFor(() => first.output().includes(`active ${job.id}`), { message: 'first worker never took the job' });
    await first.kill();

    const second = await spawnJobWorker(env);
    try {
      await waitFor(async () => (await queue.getJob(job.id!))?.finishedOn, { timeoutMs: 30_000, message: 'job not completed after the kill' });
      const done = (await queue.getJob(job.id!))!;
      expect(await done.getState()).toBe('completed');
      expect(done.returnvalue).toEqual({ id: job.id, pid: second.pid });
      expect(await queue.getCompletedCount()).toBe(1);
      expect(await probe.get(`test:runs:${job.id}`)).toBe('1'); // the killed run never finished
    } finally {
      await second.stop();
      await queue.close();
    }
  });

  it('queued and delayed jobs survive a Redis restart and the worker resumes by itself', async () => {
    const config = loadConfig({ REDIS_URL: redis.url, JOB_ATTEMPTS: '5' });
    const logger = silentLogger();
    const connections = new RedisConnections({ kind: 'single', url: redis.url }, connectionOptions(config), logger);
    const queue = new Queue('maintenance', { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: keys.bullPrefix });
    queue.on('error', () => undefined);
    await queue.obliterate({ force: true });

    const ran = new Set<string>();
    const worker = createWorker(
      { config, connections, keys, metrics: new Metrics({ defaultMetrics: false }), logger },
      'maintenance',
      async (job) => {
        await sleep(50);
        ran.add(job.id!);
        return 'ok';
      },
      { concurrency: 2 },
    );
    await worker.worker.pause();

    const queued = await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'q', data: { task: `queued-${i}` } })));
    const delayed = await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ name: 'd', data: { task: `delayed-${i}` }, opts: { delay: 4000 } })));
    await sleep(1500); // AOF everysec has written them
    expect(await queue.getWaitingCount()).toBe(20);

    await redis.kill(); // a crash, not a clean shutdown
    worker.worker.resume();
    await sleep(1000);
    redis = await redis.restart();

    const all = [...queued, ...delayed].map((j) => j.id!);
    await waitFor(() => all.every((id) => ran.has(id)), { timeoutMs: 40_000, message: 'not every job ran after the restart' });
    await waitFor(async () => (await queue.getCompletedCount()) === 25, { timeoutMs: 10_000, message: 'completed count' });
    expect(await queue.getFailedCount()).toBe(0);

    await worker.close();
    await queue.close();
    await connections.close();
  });

  it('a worker closed right after a Redis restart still closes', async () => {
    const config = loadConfig({ REDIS_URL: redis.url, WORKER_SHUTDOWN_GRACE_MS: '1000' });
    const logger = silentLogger();
    const connections = new RedisConnections({ kind: 'single', url: redis.url }, connectionOptions(config), logger);
    const worker = createWorker({ config, connections, keys, metrics: new Metrics({ defaultMetrics: false }), logger }, 'maintenance', async () => 'ok');
    await worker.worker.waitUntilReady();
    await sleep(300); // the blocking connection is waiting for jobs
    await redis.stop();
    await sleep(500);
    redis = await redis.restart();
    const outcome = await Promise.race([worker.close().then(() => 'closed'), sleep(30_000).then(() => 'still closing')]);
    expect(outcome).toBe('closed');
    await connections.close();
  });
});
