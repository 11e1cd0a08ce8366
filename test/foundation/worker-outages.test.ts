/**
 * Invariant 10 (an outage is not a failure) at the level of the worker factory, on a real Redis
 * and a real PostgreSQL of this file's own (paused, stopped and frozen here, so the shared ones
 * stay up for the other files):
 * - a job whose processor meets Redis frozen ("Command timed out") or gone (connection lost),
 *   or the database stopped mid-query, is delayed and completes once the dependency is back: its
 *   one attempt unspent, no failed job, wp_jobs_delayed_total{reason="outage"} counted, one warn
 *   naming the dependency;
 * - a maintenance task of the leader (one attempt per run) with PostgreSQL frozen: the same;
 * - Redis frozen (SIGSTOP) longer than the lock duration, twice, under active jobs: every job is
 *   handed back as stalled and completes after SIGCONT, none fails ("job stalled more than
 *   allowable limit" needs more stalls than WORKER_MAX_STALLED_COUNT);
 * - a job handing itself back (a stopping crawler's BlockedError) while a renewal of its lock is
 *   in flight, and a worker closing while its job's lock renewal fails, log nothing at error level.
 * No line at error level anywhere: an outage is not a bug.
 */
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { LeaderTerm } from '../../src/coordination/leadership.js';
import { BlockedError } from '../../src/errors.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import type { Logger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createWorker, type JobProcessor } from '../../src/queues/create-worker.js';
import { startMaintenance } from '../../src/coordination/maintenance-worker.js';
import { QueueRegistry } from '../../src/queues/registry.js';
import { connectionOptions } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { createKeys } from '../../src/redis/keys.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

interface LogLine {
  level: number;
  msg: string;
  err?: string;
  dependency?: string;
  jobId?: string;
}

/** A logger whose lines (debug and up) the test reads. */
function capturedLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

/** The factory said what became of the job's run (delayed by the outage, or failed): a warn line about it. */
const decided = (lines: LogLine[], jobId: string) => lines.some((l) => l.level === 40 && l.jobId === jobId);

const atError = (lines: LogLine[]) => lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err ?? ''}`);

/** Resolves `wait()` once `open()` is called. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open };
}

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('jobs meeting an outage', () => {
  let redis: TestRedis;
  let cluster: PostgresCluster;
  let dbUrl: string;
  let probe: Redis;

  beforeAll(async () => {
    redis = await startTestRedis();
    cluster = await startPostgresCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE outages');
    await admin.end();
    const u = new URL(cluster.url);
    u.pathname = '/outages';
    dbUrl = u.toString();
    probe = new Redis(redis.url, { maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
  });
  afterAll(async () => {
    try {
      process.kill(redis.pid, 'SIGCONT');
    } catch {
      // not frozen, or gone
    }
    probe?.disconnect();
    await redis?.destroy();
    await cluster?.stop();
  });

  /** A worker of the plain `maintenance` queue under its own key prefix, a registry and a reader of the queue. */
  function rig(prefix: string, env: Record<string, string>, processor: JobProcessor<'maintenance'>, concurrency?: number) {
    const config = loadConfig({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '1000', ...env });
    const { logger, lines } = capturedLogger();
    const keys = createKeys(prefix);
    const connections = new RedisConnections({ kind: 'single', url: redis.url }, connectionOptions(config), logger);
    const metrics = new Metrics({ defaultMetrics: false });
    const queues = new QueueRegistry({ config, connections, keys });
    // What a request path uses: fails after REDIS_COMMAND_TIMEOUT_MS, or at once without a connection.
    const command = connections.create('command', 'test:command');
    const worker = createWorker({ config, connections, keys, metrics, logger }, 'maintenance', processor, concurrency ? { concurrency } : {});
    // Read with a connection that waits across an outage (the registry's fails fast).
    const reader = new Queue('maintenance', { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: keys.bullPrefix });
    reader.on('error', () => undefined);
    return {
      config,
      keys,
      lines,
      logger,
      connections,
      command,
      metrics,
      queues,
      worker,
      reader,
      finished: (id: string, timeoutMs = 60_000) =>
        waitFor(
          async () => {
            const job = await reader.getJob(id);
            return job?.finishedOn ? job : undefined;
          },
          { timeoutMs, message: `job ${id} did not finish` },
        ),
      async close() {
        await worker.close();
        await queues.close();
        await reader.close();
        await connections.close();
      },
    };
  }

  /** The job ended completed, its one attempt spent by the completion only, nothing failed. */
  async function expectCompletedOnce(r: ReturnType<typeof rig>, done: Job) {
    expect(await done.getState()).toBe('completed');
    expect(done.attemptsMade).toBe(1);
    expect(done.failedReason).toBeUndefined();
    expect(await r.reader.getFailedCount()).toBe(0);
  }

  it('a job meeting "Command timed out" (Redis frozen) completes after the outage, its attempt unspent', async () => {
    const started = gate();
    const proceed = gate();
    let runs = 0;
    const r = rig('t-timeout', {}, async () => {
      runs++;
      if (runs === 1) {
        started.open();
        await proceed.wait();
      }
      await r.command.incr('t-timeout:probe');
      return { runs };
    });
    try {
      const job = await r.queues.add('maintenance', 'probe', { task: 'probe' }, { attempts: 1 });
      await started.wait();
      process.kill(redis.pid, 'SIGSTOP');
      try {
        proceed.open();
        await waitFor(() => decided(r.lines, job.id!), { message: 'the run never ended' });
      } finally {
        process.kill(redis.pid, 'SIGCONT');
      }
      const done = await r.finished(job.id!);
      await expectCompletedOnce(r, done);
      expect(done.returnvalue).toEqual({ runs: 2 });
      const outage = r.lines.filter((l) => l.dependency === 'redis' && l.level === 40);
      expect(outage).toHaveLength(1);
      expect(outage[0]!.err).toBe('Command timed out');
      expect(outage[0]!.msg).toBe('Redis unavailable: job delayed without spending an attempt');
      const text = await r.metrics.registry.metrics();
      expect(metricValue(text, 'wp_jobs_delayed_total', 'queue="maintenance",reason="outage"')).toBe(1);
      expect(metricValue(text, 'wp_jobs_failed_total', 'queue="maintenance",outcome="dead"')).toBe(0);
      expect(atError(r.lines)).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('a job whose Redis connection is lost (server stopped mid-job) completes once Redis is back, its attempt unspent', async () => {
    const started = gate();
    const proceed = gate();
    let runs = 0;
    const r = rig('t-lost', {}, async () => {
      runs++;
      if (runs === 1) {
        started.open();
        await proceed.wait();
      }
      await r.command.incr('t-lost:probe');
      return { runs };
    });
    try {
      const job = await r.queues.add('maintenance', 'probe', { task: 'probe' }, { attempts: 1 });
      await started.wait();
      await redis.stop(); // SHUTDOWN: the AOF keeps the job
      proceed.open();
      await waitFor(() => decided(r.lines, job.id!), { message: 'the run never ended' });
      redis = await redis.restart();
      const done = await r.finished(job.id!);
      await expectCompletedOnce(r, done);
      expect(done.returnvalue).toEqual({ runs: 2 });
      expect(atError(r.lines)).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('a job meeting the database stopped mid-query completes once it is back, its attempt unspent, delayed as often as needed', async () => {
    const { logger: dbLogger } = capturedLogger();
    const db: Database = createDatabase({ url: dbUrl, poolSize: 2, logger: dbLogger });
    let runs = 0;
    const r = rig('t-db', {}, async () => {
      runs++;
      if (runs === 1) await db.prisma.$queryRaw`SELECT pg_sleep(60)`; // cut off by the stop
      const [row] = await db.prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`;
      return { runs, one: row!.one };
    });
    try {
      const job = await r.queues.add('maintenance', 'probe', { task: 'probe' }, { attempts: 1 });
      await waitFor(
        async () => {
          const c = new pg.Client({ connectionString: dbUrl });
          await c.connect();
          try {
            return (await c.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'`)).rowCount === 1;
          } finally {
            await c.end();
          }
        },
        { message: 'the job never started its query' },
      );
      await cluster.stopServer();
      // Still down: the job meets the outage again at each run, and waits again.
      await waitFor(
        async () =>
          metricValue(await r.metrics.registry.metrics(), 'wp_jobs_delayed_total', 'queue="maintenance",reason="outage"') >= 3 ||
          (await r.reader.getJob(job.id!))?.finishedOn,
        { message: 'the job was not delayed again while the database stayed down' },
      );
      expect(await r.reader.getFailedCount()).toBe(0);
      await cluster.startServer();
      const done = await r.finished(job.id!);
      await expectCompletedOnce(r, done);
      expect(done.returnvalue).toMatchObject({ one: 1 });
      expect(runs).toBeGreaterThanOrEqual(4);
      // Warned once for this job, whatever the number of runs that met the outage.
      expect(r.lines.filter((l) => l.dependency === 'database' && l.level === 40)).toHaveLength(1);
      expect(r.lines.filter((l) => l.dependency === 'database').length).toBe(runs - 1);
      expect(atError(r.lines)).toEqual([]);
    } finally {
      await cluster.startServer(); // running already, unless this test failed while it was stopped
      await r.close();
      await db.close();
    }
  });

  it('a maintenance task of the leader meeting PostgreSQL frozen is delayed, not failed, and runs once it thaws', async () => {
    const config: Config = loadConfig({ REDIS_URL: redis.url });
    const { logger, lines } = capturedLogger();
    const keys = createKeys('t-maint');
    const connections = new RedisConnections({ kind: 'single', url: redis.url }, connectionOptions(config), logger);
    const metrics = new Metrics({ defaultMetrics: false });
    const queues = new QueueRegistry({ config, connections, keys });
    const reader = new Queue('maintenance', { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: keys.bullPrefix });
    reader.on('error', () => undefined);
    const term: LeaderTerm = { task: 'leader', token: 7, value: 'test#7', signal: new AbortController().signal, isCurrent: () => true };
    const started = gate();
    const proceed = gate();
    let runs = 0;
    const pool = new pg.Pool({ connectionString: dbUrl, max: 2, connectionTimeoutMillis: 1000 });
    pool.on('error', () => undefined);
    const stop = await startMaintenance(
      { config, connections, keys, metrics, logger, queues, instanceId: 'test-leader' },
      [
        {
          name: 'outage-probe',
          everyMs: 0,
          runAtStart: true,
          async run() {
            runs++;
            if (runs === 1) {
              started.open();
              await proceed.wait();
            }
            // Through a pool, as every query of the platform goes: no connection can be made while the server is frozen.
            return (await pool.query('SELECT 1 AS one')).rows[0];
          },
        },
      ],
      term,
    );
    try {
      await started.wait();
      cluster.pause();
      try {
        proceed.open();
        await waitFor(
          async () =>
            metricValue(await metrics.registry.metrics(), 'wp_maintenance_runs_total', 'task="outage-probe",outcome="delayed"') >= 2 ||
            (await reader.getJob('outage-probe@term-7'))?.finishedOn,
          { message: 'the run was not delayed while the database was frozen' },
        );
        expect(await reader.getFailedCount()).toBe(0);
      } finally {
        cluster.resume();
      }
      const done = await waitFor(
        async () => {
          const job = await reader.getJob('outage-probe@term-7');
          return job?.finishedOn ? job : undefined;
        },
        { timeoutMs: 60_000, message: 'the run did not finish' },
      );
      expect(await done.getState()).toBe('completed');
      expect(done.attemptsMade).toBe(1);
      expect(done.returnvalue).toEqual({ one: 1 });
      expect(await reader.getFailedCount()).toBe(0);
      const text = await metrics.registry.metrics();
      expect(metricValue(text, 'wp_maintenance_runs_total', 'task="outage-probe",outcome="failed"')).toBe(0);
      expect(metricValue(text, 'wp_maintenance_runs_total', 'task="outage-probe",outcome="ok"')).toBe(1);
      const outage = lines.filter((l) => l.dependency === 'database' && l.level === 40);
      expect(outage).toHaveLength(1);
      expect(outage[0]!.err).toBe('Connection terminated due to connection timeout');
      expect(atError(lines)).toEqual([]);
    } finally {
      cluster.resume();
      await stop();
      await pool.end();
      await queues.close();
      await reader.close();
      await connections.close();
    }
  });

  it('Redis frozen past the lock duration, twice, under active jobs: every job completes after SIGCONT, none fails', async () => {
    const LOCK_MS = 2000;
    const ids = ['a', 'b', 'c', 'd'];
    const runs = new Map<string, number>();
    const release = gate();
    const r = rig(
      't-freeze',
      { WORKER_LOCK_DURATION_MS: String(LOCK_MS), WORKER_STALLED_INTERVAL_MS: '1000' },
      async (job) => {
        const run = (runs.get(job.id!) ?? 0) + 1;
        runs.set(job.id!, run);
        await release.wait(); // busy until the test is done freezing
        return { run };
      },
      // Room for every job's three runs: a run whose lock was lost goes on until it ends.
      ids.length * 3,
    );
    /** Each job ran `n` times, or failed (what BullMQ's default of 1 stall does to the second). */
    const allRan = (n: number) =>
      waitFor(
        async () => {
          const failed = await r.reader.getFailedCount();
          return failed > 0 || ids.every((id) => (runs.get(id) ?? 0) >= n);
        },
        { timeoutMs: 30_000, message: `not every job ran ${n} times` },
      );
    const freeze = async () => {
      process.kill(redis.pid, 'SIGSTOP');
      try {
        await sleep(LOCK_MS + 1000); // the fault itself: frozen longer than the lock, which expires meanwhile
      } finally {
        process.kill(redis.pid, 'SIGCONT');
      }
    };
    try {
      for (const id of ids) await r.queues.add('maintenance', 'busy', { task: `busy-${id}` }, { attempts: 1, jobId: id });
      await allRan(1);
      await freeze();
      await allRan(2); // each handed back as stalled and taken again
      await freeze();
      await allRan(3);
      expect(await r.reader.getFailedCount()).toBe(0);
      release.open();
      for (const id of ids) {
        const done = await r.finished(id);
        expect(await done.getState(), `job ${id}: ${done.failedReason}`).toBe('completed');
        expect(done.returnvalue).toEqual({ run: 3 });
        expect(done.attemptsMade).toBe(1);
      }
      expect(await r.reader.getFailedCount()).toBe(0);
      expect(r.lines.some((l) => /stalled more than allowable limit/.test(JSON.stringify(l)))).toBe(false);
      // The runs that lost their locks could not finish their jobs, and said so below error level.
      expect(r.lines.filter((l) => l.level === 40 && l.msg.startsWith('job lock lost')).length).toBeGreaterThanOrEqual(ids.length);
      expect(atError(r.lines)).toEqual([]);
    } finally {
      release.open();
      await r.close();
    }
  }, 120_000);

  it('a job handing itself back while a renewal of its lock is in flight logs nothing at error level', async () => {
    // A stopping crawler hands its crawl back (BlockedError) as the lock renewal runs: Redis
    // frozen for a moment makes the renewal reach it after the hand-back released the lock.
    const started = gate();
    const proceed = gate();
    let runs = 0;
    const r = rig('t-handback', { WORKER_LOCK_DURATION_MS: '1000' }, async () => {
      runs++;
      if (runs === 1) {
        started.open();
        await proceed.wait();
        throw new BlockedError('the crawler stopped during this crawl; handed back', 200, 'shutdown', { routine: true });
      }
      return { runs };
    });
    try {
      const job = await r.queues.add('maintenance', 'crawl-like', { task: 'crawl-like' }, { attempts: 1 });
      await started.wait();
      process.kill(redis.pid, 'SIGSTOP');
      try {
        proceed.open();
        await sleep(800); // the fault itself: frozen across a renewal (every 250 ms), which queues behind the hand-back
      } finally {
        process.kill(redis.pid, 'SIGCONT');
      }
      const done = await r.finished(job.id!);
      await expectCompletedOnce(r, done);
      expect(done.returnvalue).toEqual({ runs: 2 });
      expect(r.lines.some((l) => l.err === `could not renew lock for job ${job.id}`)).toBe(true); // the renewal did fail
      expect(atError(r.lines)).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('a worker closing while the lock renewal of its job fails logs nothing at error level, and closes', async () => {
    const started = gate();
    const release = gate();
    const r = rig('t-close', { WORKER_LOCK_DURATION_MS: '1000', WORKER_SHUTDOWN_GRACE_MS: '20000' }, async () => {
      started.open();
      await release.wait();
      return 'done';
    });
    try {
      const job = await r.queues.add('maintenance', 'slow', { task: 'slow' }, { attempts: 1 });
      await started.wait();
      const closed = r.worker.close();
      // The lock is gone (expired under a frozen Redis, say): every renewal from now on fails.
      await probe.del(`${r.keys.bullPrefix}:maintenance:${job.id}:lock`);
      await waitFor(() => r.lines.some((l) => l.err === `could not renew lock for job ${job.id}`), { message: 'no renewal failed' });
      release.open();
      await closed;
      expect(atError(r.lines)).toEqual([]);
    } finally {
      release.open();
      await r.close();
    }
  });
});
