/**
 * Benchmark of cost as the work grows (`npm run bench:scale`): each kind of work grown by factors
 * of ten, through the platform's own code paths, with the cost per item printed next to a plain
 * baseline measured at the same step, and a summary of how each per-item cost grew from the
 * smallest step to the largest (raw, and against the baseline, which takes out what the shared
 * machine's load did between the steps; above 1.2x is flagged).
 *
 *   ips       IPs scheduled 10k → 100k → 1M: start-up reconciliation, memory per IP, steady state
 *             (reconciliation with nothing to do, a closed loop's next crawl), lateness of 1,000 due
 *             at once; plain BullMQ delayed jobs (bench/scale-queues.ts)
 *   feeds     feeds scheduled 10k → 100k → 1M: the same through the feeds' chain reconciliation
 *   pools     pool rows 10k → 1M → 10M: refill rows/s and the HTTP pop route's pops/s
 *   messages  message rows 10k → 1M → 10M (100 per session): read-through p99, persist rows/s
 *   articles  articles 10k → 1M → 10M (200 per feed): a refresh's insert-and-dedupe
 *             (bench/scale-tables.ts)
 *
 * Tables are bulk-loaded with set-based SQL (generate_series), secondary indexes built after the
 * load, then analyzed; the platform's operations run against them. Redis memory (INFO memory,
 * MEMORY USAGE of sample keys) and table sizes (pg_total_relation_size) are printed per step.
 *
 * `npm run bench:scale -- --quick` runs only the smallest step of each part (10k; a few minutes), to
 * check the benchmark itself; `--max=100000` drops the steps above that size; `--parts=pools,articles`
 * picks parts (default all). BENCH_SCALE_MAX and BENCH_SCALE_PARTS set the same from the environment.
 * Starts its own redis-server (no AOF) and PostgreSQL cluster (fsync off) and removes them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyMigrations } from '../src/db/migrate.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import { createBenchDatabase } from './http-load.js';
import { benchFeeds, benchIps } from './scale-queues.js';
import { openEnv, ScaleRecord, stepLabel } from './scale-support.js';
import { benchArticles, benchMessages, benchPools } from './scale-tables.js';

const ALL_PARTS = ['ips', 'feeds', 'pools', 'messages', 'articles'];
/** `--name=value` of the command line, else the environment's `env`. */
const option = (name: string, env: string) =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3) ?? process.env[env];
const unknown = process.argv.slice(2).filter((a) => a !== '--quick' && !/^--(max|parts)=/.test(a));
if (unknown.length) throw new Error(`bench:scale: unknown option ${unknown.join(' ')} (options: --quick, --max=N, --parts=${ALL_PARTS.join(',')})`);
const PARTS = (option('parts', 'BENCH_SCALE_PARTS') ?? ALL_PARTS.join(',')).split(',').map((p) => p.trim().toLowerCase());
const badPart = PARTS.find((p) => !ALL_PARTS.includes(p));
if (badPart) throw new Error(`bench:scale: unknown part ${badPart} (parts: ${ALL_PARTS.join(', ')})`);
const MAX = process.argv.includes('--quick') ? 10_000 : Number(option('max', 'BENCH_SCALE_MAX') ?? 10_000_000);
if (!Number.isInteger(MAX) || MAX < 10_000) throw new Error('bench:scale: --max must be an integer of at least 10000');
const STEPS: Record<string, number[]> = {
  ips: [10_000, 100_000, 1_000_000],
  feeds: [10_000, 100_000, 1_000_000],
  pools: [10_000, 1_000_000, 10_000_000],
  messages: [10_000, 1_000_000, 10_000_000],
  articles: [10_000, 1_000_000, 10_000_000],
};
const stepsOf = (part: string) => STEPS[part]!.filter((n) => n <= MAX);

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-scale-'));
const redisServer = await startRedisServer({ dir: path.join(tmp, 'redis'), appendOnly: false });
const cluster = await startPostgresCluster();
let cleaning: Promise<void> | undefined;
const cleanup = () =>
  (cleaning ??= (async () => {
    await redisServer.stop();
    await cluster.stop();
    rmSync(tmp, { recursive: true, force: true });
  })());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

const record = new ScaleRecord();
const started = Date.now();
try {
  const dbUrl = await createBenchDatabase(cluster.url, 'bench_scale');
  await applyMigrations(dbUrl);
  console.log(
    `scale benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `node ${process.version}; PostgreSQL 15 (fsync off, shared_buffers 128MB), Redis without AOF; load average ${load()}`,
  );
  console.log(`parts ${PARTS.join(', ')}; steps up to ${stepLabel(MAX)}`);
  const env = await openEnv(redisServer, dbUrl);
  try {
    if (PARTS.includes('ips')) await benchIps(env, stepsOf('ips'), record);
    if (PARTS.includes('feeds')) await benchFeeds(env, stepsOf('feeds'), record);
    if (PARTS.includes('pools')) await benchPools(env, stepsOf('pools'), record, { redisUrl: redisServer.url, dbUrl, dataDir: path.join(tmp, 'data') });
    if (PARTS.includes('messages'))
      await benchMessages(env, stepsOf('messages'), record, { redisUrl: redisServer.url, dbUrl, dataDir: path.join(tmp, 'data') });
    if (PARTS.includes('articles')) await benchArticles(env, stepsOf('articles'), record);
  } finally {
    await env.close();
  }
  console.log(
    `\nSummary: cost per item by step, and its growth from the smallest step to the largest (${((Date.now() - started) / 60_000).toFixed(1)} min, load average ${load()})`,
  );
  for (const line of record.summary()) console.log(`  ${line}`);
} finally {
  await cleanup();
}
process.exit(0);
