/**
 * Benchmark of the result pipeline and the crawl scheduler (`npm run bench:pipeline`).
 *
 * A. One 500-item crawl result through steps 1-6 (idempotency check, item state machine in
 *    Redis, snapshots + hourly stats + alerts + weight in one transaction, next crawl scheduled,
 *    caches invalidated), on PostgreSQL: p50 / p99 ms per result and results/s
 *    (one result at a time). Workload: BENCH_PIPELINE_IPS IPs (default 20) crawled
 *    BENCH_PIPELINE_ROUNDS times each (default 5); each result has 250 on-sale and 250 sold
 *    items, and between rounds some sell, some change price and new ones are listed.
 *    Baseline in the same run: a bare batch on the same Redis, 500 HGETALL in one pipeline then
 *    500 HSET+EXPIRE in one pipeline (two round trips). Target on PostgreSQL: p50 <= 6x it.
 *
 * B. Scheduling BENCH_SCHEDULE_IPS IPs (default 100,000) on PostgreSQL: wall time of the start-up
 *    reconciliation that schedules them all (DB read, chain claims, BullMQ adds, next_crawl_at
 *    written back) and Redis memory per scheduled IP, against plain BullMQ delayed jobs with
 *    the same payloads (addBulk). Targets: memory <= 1.3x plain. BENCH_MEMORY_BREAKDOWN=1 prints
 *    both sides' Redis memory by key shape (after the measurement).
 *
 * C. Lateness when 1,000 crawls fall due at the same millisecond, taken by a worker at
 *    concurrency 50 (lateness = processedOn - due): plain delayed jobs, the scheduler with a
 *    backpressure threshold that does not bind (>= 1,000), and the default threshold (25, batch
 *    50) which holds crawls back by design (reported with the most jobs seen waiting).
 *    Target: p99 (non-binding) <= 1.5x plain.
 *
 * Starts its own redis-server (no AOF) and PostgreSQL cluster; removes them afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config/index.js';
import { createDatabase, type Database } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrate.js';
import { silentLogger } from '../src/logging/logger.js';
import { Metrics } from '../src/metrics/metrics.js';
import { startBackpressureLoop } from '../src/crawl-scheduling/backpressure-loop.js';
import { IpStore } from '../src/crawl-scheduling/ip-store.js';
import { reconcile } from '../src/crawl-scheduling/reconcile.js';
import { wirePipeline, type PipelineContext } from '../src/pipeline/wiring.js';
import type { CrawledItem, CrawlResultPayload } from '../src/queues/declarations/crawl.js';
import { QueueRegistry } from '../src/queues/registry.js';
import { connectionOptions, waitForReady, type RedisClient } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys } from '../src/redis/keys.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';

const IPS = Number(process.env.BENCH_PIPELINE_IPS ?? 20);
const ROUNDS = Number(process.env.BENCH_PIPELINE_ROUNDS ?? 5);
const SCHEDULE_IPS = Number(process.env.BENCH_SCHEDULE_IPS ?? 100_000);
const DUE_AT_ONCE = 1000;
/** Which parts to run: any of A, B, C (default all). */
const PARTS = (process.env.BENCH_PARTS ?? 'ABC').toUpperCase();
const ITEMS = 500;
const logger = silentLogger();

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

interface Env {
  config: Config;
  connections: RedisConnections;
  redis: RedisClient;
  queues: QueueRegistry;
  db: Database;
  ctx: PipelineContext;
  close(): Promise<void>;
}

async function openEnv(redisUrl: string, dbUrl: string, poolSize: number, extra: Record<string, string> = {}): Promise<Env> {
  const config = loadConfig({ REDIS_URL: redisUrl, DATABASE_URL: dbUrl, LOG_LEVEL: 'silent', REDIS_COMMAND_TIMEOUT_MS: '30000', ...extra });
  const keys = createKeys(config.redis.prefix);
  const connections = new RedisConnections({ kind: 'single', url: redisUrl }, connectionOptions(config), logger);
  const redis = connections.create('command', 'bench');
  await waitForReady(redis);
  const queues = new QueueRegistry({ config, connections, keys });
  const db = createDatabase({ url: dbUrl, poolSize });
  return {
    config,
    connections,
    redis,
    queues,
    db,
    ctx: { config, logger, keys, redis, queues, db },
    close: async () => {
      await queues.close();
      await db.close();
      await connections.close();
    },
  };
}

// ---- A. a 500-item result through the pipeline ---------------------------------------------

function market(ip: number, round: number): CrawledItem[] {
  // 250 on sale, 250 sold; each round 10 listed items sell, 5 change price, 10 new ones are listed.
  const onSale: CrawledItem[] = [];
  const sold: CrawledItem[] = [];
  const item = (n: number, status: 'on_sale' | 'sold', price: number): CrawledItem => ({
    sourceId: `m${ip}-${n}`,
    title: `item ${n} of IP ${ip}`,
    price,
    imageUrl: `http://127.0.0.1/img/${n}.jpg`,
    itemUrl: `http://127.0.0.1/item/${n}`,
    status,
  });
  const firstOnSale = round * 10;
  for (let n = firstOnSale; n < firstOnSale + 250; n++) onSale.push(item(10_000 + n, 'on_sale', 1000 + (n % 50) * 10 + (n % 7 === round % 7 ? round * 5 : 0)));
  for (let n = 0; n < 250; n++) sold.push(item(n < round * 10 ? 10_000 + n : 50_000 + n, 'sold', 900 + n));
  return [...onSale, ...sold];
}

async function benchResults(label: string, env: Env): Promise<{ label: string; p50: number; p99: number; perSecond: number; bareP50: number }> {
  const { db, redis } = env;
  const { scheduler, pipeline } = wirePipeline(env.ctx);
  await db.pool.query('TRUNCATE ips, processed_results RESTART IDENTITY CASCADE');
  // Crawled a minute ago: every result is compared and counted (an IP's first crawl is only recorded, first-crawl.ts).
  const { rows } = await db.pool.query<{ id: number }>(
    `INSERT INTO ips (name, keyword, last_crawled_at, updated_at) SELECT 'IP ' || i, 'kw' || i, now() - interval '1 minute', now() FROM generate_series(1, $1::int) i RETURNING id`,
    [IPS],
  );
  await scheduler.scheduleMany(rows.map((r) => ({ id: r.id, keyword: `kw${r.id}`, dueAt: Date.now() + 3_600_000 })));

  const times: number[] = [];
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    for (const { id } of rows) {
      const taskId = (await scheduler.chain.current(id))!;
      await scheduler.queues()[0]!.remove(taskId); // the crawler took it
      const result: CrawlResultPayload = {
        ipId: id,
        taskId,
        items: market(id, round),
        totalFound: ITEMS,
        pagesCrawled: 10,
        crawledAt: new Date().toISOString(),
        errors: [],
      };
      const t0 = performance.now();
      const outcome = await pipeline.process(result);
      times.push(performance.now() - t0);
      if (outcome.status !== 'processed') throw new Error(`unexpected outcome ${outcome.status}`);
    }
  }
  const total = (performance.now() - started) / 1000;

  // Bare batch: 500 HGETALL in one round trip, then 500 HSET + EXPIRE in one.
  const bare: number[] = [];
  for (let r = 0; r < ROUNDS * IPS; r++) {
    const keys = Array.from({ length: ITEMS }, (_, i) => `bench:item:{${r % IPS}}:${i}`);
    const t0 = performance.now();
    const reads = redis.pipeline();
    for (const k of keys) reads.hgetall(k);
    await reads.exec();
    const writes = redis.pipeline();
    for (const [i, k] of keys.entries()) {
      writes.hset(k, 'status', 'on_sale', 'price', 1000 + i, 'first_seen', Date.now(), 'last_seen', Date.now());
      writes.expire(k, 86_400);
    }
    await writes.exec();
    bare.push(performance.now() - t0);
  }
  return { label, p50: pct(times, 50), p99: pct(times, 99), perSecond: times.length / total, bareP50: pct(bare, 50) };
}

// ---- B. scheduling 100,000 IPs -------------------------------------------------------------

/** used_memory once Redis has finished growing its hash tables (incremental rehashing holds two tables meanwhile). */
async function usedMemory(redis: RedisClient): Promise<number> {
  await sleep(2000);
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

/** With BENCH_MEMORY_BREAKDOWN=1: Redis memory by key shape (digits as #), largest first. */
async function memoryBreakdown(redis: RedisClient, label: string): Promise<void> {
  if (!process.env.BENCH_MEMORY_BREAKDOWN) return;
  const byShape = new Map<string, { keys: number; bytes: number }>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const shape = key.replace(/\d+/g, '#');
      const entry = byShape.get(shape) ?? { keys: 0, bytes: 0 };
      entry.keys++;
      entry.bytes += Number(await redis.memory('USAGE', key, 'SAMPLES', 0));
      byShape.set(shape, entry);
    }
  } while (cursor !== '0');
  console.log(`  memory by key shape, ${label}:`);
  for (const [shape, { keys, bytes }] of [...byShape].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 8)) {
    console.log(`    ${shape.padEnd(40)} ${String(keys).padStart(7)} keys  ${(bytes / SCHEDULE_IPS).toFixed(0).padStart(6)} B per IP`);
  }
}

async function benchScheduling(env: Env) {
  const { db, redis } = env;
  await db.pool.query('TRUNCATE ips, processed_results RESTART IDENTITY CASCADE');
  await db.pool.query(`INSERT INTO ips (name, keyword, updated_at) SELECT 'IP ' || i, 'kw' || i, now() FROM generate_series(1, $1::int) i`, [SCHEDULE_IPS]);

  await redis.flushall();
  const plainQueue = new Queue('plain-crawl', { connection: env.connections.create('producer', 'plain'), prefix: env.ctx.keys.bullPrefix });
  await plainQueue.waitUntilReady();
  const mem0 = await usedMemory(redis);
  const { pagesOnSale, pagesSold } = env.config.pipeline;
  const t0 = performance.now();
  for (let i = 0; i < SCHEDULE_IPS; i += 1000) {
    const jobs = [];
    for (let id = i + 1; id <= Math.min(SCHEDULE_IPS, i + 1000); id++) {
      const taskId = `ip${id}-${'0'.repeat(8)}`; // same payload as the scheduler's
      jobs.push({
        name: 'crawl',
        data: { ipId: id, keyword: `kw${id}`, taskId, pagesOnSale, pagesSold },
        opts: { delay: 60_000 + Math.floor((id / SCHEDULE_IPS) * 3_540_000) },
      });
    }
    await plainQueue.addBulk(jobs);
  }
  const plainSeconds = (performance.now() - t0) / 1000;
  const plainBytes = (await usedMemory(redis)) - mem0;
  await memoryBreakdown(redis, 'plain BullMQ');
  await plainQueue.close();

  await redis.flushall();
  const scheduler = wirePipeline(env.ctx).scheduler;
  await scheduler.queues()[0]!.waitUntilReady();
  const mem1 = await usedMemory(redis);
  const t1 = performance.now();
  const report = await reconcile({ scheduler, ips: new IpStore(db), redis, logger, spreadSeconds: 3600, leadMs: 60_000 });
  const oursSeconds = (performance.now() - t1) / 1000;
  const oursBytes = (await usedMemory(redis)) - mem1;
  await memoryBreakdown(redis, 'scheduler');
  if (report.scheduled !== SCHEDULE_IPS) throw new Error(`scheduled ${report.scheduled} of ${SCHEDULE_IPS}`);
  const t2 = performance.now();
  const again = await reconcile({ scheduler, ips: new IpStore(db), redis, logger, spreadSeconds: 3600, leadMs: 60_000 });
  const recheckSeconds = (performance.now() - t2) / 1000;
  if (again.scheduled || again.reAdded || again.orphansRemoved) throw new Error('a second reconciliation changed something');
  return { plainSeconds, plainBytes, oursSeconds, oursBytes, recheckSeconds };
}

// ---- C. lateness of 1,000 crawls due at once ----------------------------------------------

async function lateness(env: Env, mode: 'plain' | 'scheduler', settings: Record<string, string> = {}) {
  const { redis, db } = env;
  await redis.flushall();
  const local = await openEnv(String(env.config.redis.url), String(env.config.database.url), 4, settings);
  const due = Date.now() + 4000;
  let stopLoop: (() => Promise<void>) | undefined;
  let queueName = 'crawl';
  if (mode === 'plain') {
    queueName = 'plain-crawl';
    const q = new Queue(queueName, { connection: local.connections.create('producer', 'plain'), prefix: local.ctx.keys.bullPrefix });
    const jobs = Array.from({ length: DUE_AT_ONCE }, (_, i) => ({
      name: 'crawl',
      data: { ipId: i + 1, keyword: `kw${i + 1}`, taskId: `t${i}`, pagesOnSale: 5, pagesSold: 5 },
      opts: { delay: due - Date.now() },
    }));
    await q.addBulk(jobs);
    await q.close();
  } else {
    // The IPs were crawled an interval before `due`: reconciliation puts every first crawl at `due`.
    await db.pool.query('TRUNCATE ips, processed_results RESTART IDENTITY CASCADE');
    await db.pool.query(
      `INSERT INTO ips (name, keyword, interval_seconds, last_crawled_at, updated_at)
       SELECT 'IP ' || i, 'kw' || i, 3600, $2::timestamptz - interval '3600 seconds', now() FROM generate_series(1, $1::int) i`,
      [DUE_AT_ONCE, new Date(due)],
    );
    // As the leaders do it: the start-up reconciliation (a maintenance task), and the backpressure loop.
    const scheduler = wirePipeline(local.ctx).scheduler;
    const term = { task: 'crawl-scheduler', token: 1, value: 'bench#1', signal: new AbortController().signal, isCurrent: () => true };
    stopLoop = startBackpressureLoop(
      { scheduler, redis: local.redis, settings: local.config.pipeline, metrics: new Metrics({ defaultMetrics: false }), logger },
      term,
    );
    await reconcile({
      scheduler,
      ips: new IpStore(local.db),
      redis: local.redis,
      logger,
      spreadSeconds: local.config.pipeline.spreadSeconds,
      leadMs: local.config.pipeline.tickMs,
    });
  }
  const lates: number[] = [];
  let maxWaiting = 0;
  const worker = new Worker(queueName, async (job) => void lates.push((job.processedOn ?? Date.now()) - due), {
    connection: local.connections.create('bullmq', 'bench-worker'),
    prefix: local.ctx.keys.bullPrefix,
    concurrency: 50,
  });
  const probe = new Queue(queueName, { connection: local.connections.create('producer', 'probe'), prefix: local.ctx.keys.bullPrefix });
  const started = Date.now();
  while (lates.length < DUE_AT_ONCE && Date.now() - started < 300_000) {
    const c = await probe.getJobCounts('waiting', 'prioritized');
    maxWaiting = Math.max(maxWaiting, (c.waiting ?? 0) + (c.prioritized ?? 0));
    await sleep(10);
  }
  await stopLoop?.();
  await worker.close();
  await probe.close();
  await local.close();
  return { p50: pct(lates, 50), p99: pct(lates, 99), max: Math.max(...lates), maxWaiting, done: lates.length };
}

// ---- main ----------------------------------------------------------------------------------

const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-pipeline-'));
const redisServer = await startRedisServer({ dir: path.join(dir, 'redis'), appendOnly: false });
const cluster = await startPostgresCluster();
const admin = new pg.Client({ connectionString: cluster.url });
await admin.connect();
await admin.query('CREATE DATABASE bench_pipeline');
await admin.end();
const pgUrl = new URL(cluster.url);
pgUrl.pathname = '/bench_pipeline';
await applyMigrations(pgUrl.toString());

try {
  console.log(`pipeline benchmark — ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores\n`);
  if (PARTS.includes('A')) console.log(`A. one ${ITEMS}-item result through steps 1-6 (${IPS} IPs x ${ROUNDS} rounds, one at a time)`);
  for (const [label, url, pool] of PARTS.includes('A') ? ([['PostgreSQL', pgUrl.toString(), 10]] as const) : []) {
    const env = await openEnv(redisServer.url, url, pool);
    await env.redis.flushall();
    const r = await benchResults(label, env);
    console.log(
      `  ${label.padEnd(10)} p50 ${ms(r.p50)}  p99 ${ms(r.p99)}  ${r.perSecond.toFixed(1)} results/s` +
        `  | bare batch p50 ${ms(r.bareP50)}  → p50 ratio ${ratio(r.p50, r.bareP50)}${label === 'PostgreSQL' ? ' (target <= 6x)' : ''}`,
    );
    await env.close();
  }

  const env = await openEnv(redisServer.url, pgUrl.toString(), 10);
  if (PARTS.includes('B')) {
    console.log(`\nB. scheduling ${SCHEDULE_IPS.toLocaleString('en')} IPs (PostgreSQL)`);
    const s = await benchScheduling(env);
    console.log(`  plain BullMQ delayed jobs (addBulk)   ${s.plainSeconds.toFixed(1)} s   ${(s.plainBytes / SCHEDULE_IPS).toFixed(0)} B per job`);
    console.log(
      `  scheduler (start-up reconciliation)   ${s.oursSeconds.toFixed(1)} s   ${(s.oursBytes / SCHEDULE_IPS).toFixed(0)} B per IP  → time ${ratio(s.oursSeconds, s.plainSeconds)}, memory ${ratio(s.oursBytes, s.plainBytes)} (target <= 1.3x)`,
    );
    console.log(`  a second reconciliation (nothing to do) ${s.recheckSeconds.toFixed(1)} s`);
  }

  if (PARTS.includes('C')) {
    console.log(`\nC. ${DUE_AT_ONCE.toLocaleString('en')} crawls due at once, worker concurrency 50 (lateness = processedOn - due)`);
    const plain = await lateness(env, 'plain');
    console.log(`  plain delayed jobs                    p50 ${ms(plain.p50)}  p99 ${ms(plain.p99)}  max ${ms(plain.max)}  most waiting ${plain.maxWaiting}`);
    const open = await lateness(env, 'scheduler', { SCHEDULER_BACKPRESSURE_THRESHOLD: '2000', SCHEDULER_BATCH_SIZE: '2000' });
    console.log(
      `  scheduler, threshold 2000 (not binding) p50 ${ms(open.p50)}  p99 ${ms(open.p99)}  max ${ms(open.max)}  most waiting ${open.maxWaiting}  → p99 ${ratio(open.p99, plain.p99)} (target <= 1.5x)`,
    );
    const held = await lateness(env, 'scheduler');
    console.log(
      `  scheduler, defaults (threshold 25, batch 50) p50 ${ms(held.p50)}  p99 ${ms(held.p99)}  most waiting ${held.maxWaiting} (held back by design; ${held.done} done)`,
    );
  }
  await env.close();
} finally {
  await cluster.stop();
  await redisServer.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
