/**
 * The worker factory maps error classes to BullMQ outcomes and records metrics; the queue
 * registry validates payloads before anything reaches Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { BlockedError, PermanentError } from '../../src/errors.js';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { connectionOptions } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { createKeys } from '../../src/redis/keys.js';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import { PayloadError, QueueRegistry } from '../../src/queues/registry.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

describe('worker factory and queue registry', () => {
  let redis: TestRedis;
  let connections: RedisConnections;
  let queues: QueueRegistry;
  let worker: PlatformWorker;
  const metrics = new Metrics({ defaultMetrics: false });
  const seen: Record<string, number> = {};

  beforeAll(async () => {
    redis = await startTestRedis();
    const config = loadConfig({ REDIS_URL: redis.url, JOB_BACKOFF_MS: '50' });
    connections = new RedisConnections({ kind: 'single', url: redis.url }, connectionOptions(config), silentLogger());
    const keys = createKeys('wp');
    queues = new QueueRegistry({ config, connections, keys });
    worker = createWorker({ config, connections, keys, metrics, logger: silentLogger() }, 'maintenance', async (job) => {
      const task = job.data.task;
      seen[task] = (seen[task] ?? 0) + 1;
      if (task === 'permanent') throw new PermanentError('this cannot work');
      if (task === 'flaky' && seen[task]! < 3) throw new Error('transient');
      if (task === 'always-fails') throw new Error('still broken');
      if (task === 'blocked' && seen[task] === 1) throw new BlockedError('remote said wait', 1500);
      return { task };
    });
  });
  afterAll(async () => {
    await worker.close();
    await queues.close();
    await connections.close();
    await redis.destroy();
  });

  async function finished(id: string) {
    return waitFor(
      async () => {
        const job = await queues.queue('maintenance').getJob(id);
        return job?.finishedOn ? job : undefined;
      },
      { timeoutMs: 20_000 },
    );
  }

  it('retries a transient failure with backoff and completes', async () => {
    const job = await queues.add('maintenance', 'flaky', { task: 'flaky' });
    const done = await finished(job.id!);
    expect(await done.getState()).toBe('completed');
    expect(done.attemptsMade).toBe(3);
    expect(seen.flaky).toBe(3);
  });

  it('fails a PermanentError at once, without retries', async () => {
    const job = await queues.add('maintenance', 'permanent', { task: 'permanent' });
    const done = await finished(job.id!);
    expect(await done.getState()).toBe('failed');
    expect(done.failedReason).toBe('this cannot work');
    expect(seen.permanent).toBe(1);
  });

  it('lands in the failed set after the configured attempts', async () => {
    const job = await queues.add('maintenance', 'always', { task: 'always-fails' });
    const done = await finished(job.id!);
    expect(await done.getState()).toBe('failed');
    expect(done.attemptsMade).toBe(3);
    expect(done.stacktrace?.length).toBeGreaterThan(0);
  });

  it('delays a BlockedError without spending an attempt', async () => {
    const job = await queues.add('maintenance', 'blocked', { task: 'blocked' });
    await waitFor(async () => (await job.getState()) === 'delayed', { timeoutMs: 5000, message: 'the blocked job to wait its 1.5 s in the delayed set' });
    const done = await finished(job.id!);
    expect(await done.getState()).toBe('completed');
    expect(seen.blocked).toBe(2);
    expect(done.attemptsMade).toBe(1);
  });

  it('rejects a bad payload before anything reaches Redis', async () => {
    const before = await queues.queue('maintenance').count();
    await expect(queues.add('maintenance', 'bad', { task: '' } as never)).rejects.toThrow(PayloadError);
    await expect(queues.add('maintenance', 'bad', { nope: 1 } as never)).rejects.toThrow(/task/);
    expect(await queues.queue('maintenance').count()).toBe(before);
  });

  it('counts completions, failures by outcome and durations per queue', async () => {
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/wp_jobs_completed_total\{queue="maintenance"\} [1-9]/);
    expect(text).toMatch(/wp_jobs_failed_total\{queue="maintenance",outcome="dead"\} [1-9]/);
    expect(text).toMatch(/wp_jobs_failed_total\{queue="maintenance",outcome="retry"\} [1-9]/);
    expect(text).not.toMatch(/wp_jobs_failed_total\{queue="maintenance",outcome="delayed"\}/);
    expect(text).toMatch(/wp_jobs_delayed_total\{queue="maintenance",reason="blocked"\} [1-9]/);
    expect(text).toMatch(/wp_job_duration_seconds_count\{queue="maintenance"\} [1-9]/);
  });

  it('closes idempotently', async () => {
    const a = worker.close();
    const b = worker.close();
    expect(a).toBe(b);
    await a;
  });
});
