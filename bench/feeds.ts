/**
 * Benchmark of feed refresh (`npm run bench:feeds`).
 *
 * Refresh: 1,000 feeds on 100 local domains (127.0.0.2 ... 127.0.0.101, one fixture server
 * listening on each; all of 127.0.0.0/8 is loopback on Linux), 50 items each, refreshed by two
 * feeds worker processes (PostgreSQL, one Redis). Refreshes/s and articles upserted/s, against
 * the bound the spacing allows (100 domains at 1 request/s = 100 refreshes/s), with the spacing
 * between requests to one domain measured at the server (it must never be under 1 s).
 * Baselines in the same run: the same 1,000 fresh feeds with FEED_DOMAIN_MIN_INTERVAL_MS=0, i.e.
 * what the machine does when politeness costs nothing (its capacity), and 200 feeds on 20 domains
 * with the 1 s spacing, a bound (20/s) well inside that capacity, to show how close the domain gate
 * itself gets to its bound. Worker CPU per refresh is reported to explain the capacity; the median
 * time to a domain's first request, the mean gap per domain (the spacing plus what a turn costs)
 * and the wake-ups per refresh (1 = each job was taken once, at its turn) explain the ratio.
 *
 * Parse: MB/s of the feed parse against the parser library alone, on 5 MB documents
 * (bench/feed-parse.ts says how).
 *
 * Starts its own redis-server and PostgreSQL cluster and removes them afterwards.
 * `npm run bench:feeds -- --parse-only` runs the parse part alone (no services, no processes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { createDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrate.js';
import { domainOf } from '../src/feeds/domain-gate.js';
import { wireFeeds } from '../src/feeds/wiring.js';
import { silentLogger } from '../src/logging/logger.js';
import { QueueRegistry } from '../src/queues/registry.js';
import { connectionOptions } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys } from '../src/redis/keys.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { startFeedServer, type FeedServer } from '../test/fixtures/feeds/feed-server.js';
import { testEnv } from '../test/support/env.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import { processCpuUs } from './http-load.js';
import { spawnPlatform, type PlatformProcess } from '../test/support/processes.js';
import { printParse } from './feed-parse.js';

const DOMAINS = 100;
const FEEDS = 1000;
const ITEMS = 50;
const WORKERS = 2;
const CONCURRENCY = 50;
const SPACING_MS = 1000;

interface RoundSpec {
  label: string;
  feeds: number;
  domains: number;
  spacingMs: number;
}

interface RoundResult extends RoundSpec {
  seconds: number;
  refreshesPerSecond: number;
  articlesPerSecond: number;
  articles: number;
  minGapMs: number;
  meanDomainSpanMs: number;
  /** CPU seconds the worker processes used during the round (after start-up). */
  workerCpuSeconds: number;
  /** Median time from the round's start to the first request of a domain. */
  firstRequestMs: number;
  /** Mean gap between two requests to one domain (the spacing plus what the turn costs). */
  meanGapMs: number;
  /** Times a refresh job was taken by a worker, per refresh (1 = each job woke once, at its turn). */
  wakesPerRefresh: number;
}

function env(redisUrl: string, databaseUrl: string, dataDir: string, spacingMs: number): NodeJS.ProcessEnv {
  return testEnv(
    { url: redisUrl },
    { url: databaseUrl, poolSize: 10 },
    {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      FEED_DOMAIN_MIN_INTERVAL_MS: String(spacingMs),
      FEED_WORKER_CONCURRENCY: String(CONCURRENCY),
      FEED_RECONCILE_INTERVAL_SECONDS: '0',
      OUTBOUND_ALLOW: '127.0.0.0/8', // the fixture feed server's hosts (loopback is refused by default)
    },
  );
}

/** CPU seconds (user + system) a process has used so far. */
const cpuSeconds = (pid: number) => processCpuUs(pid) / 1e6;

async function round(spec: RoundSpec, ctx: { redisUrl: string; dbUrl: string; dataDir: string; server: FeedServer }): Promise<RoundResult> {
  const { label, feeds: count, domains, spacingMs } = spec;
  const config = loadConfig(env(ctx.redisUrl, ctx.dbUrl, ctx.dataDir, spacingMs));
  const db = createDatabase({ url: ctx.dbUrl, poolSize: 5 });
  const connections = new RedisConnections({ kind: 'single', url: ctx.redisUrl }, connectionOptions(config), silentLogger());
  const keys = createKeys(config.redis.prefix);
  const queues = new QueueRegistry({ config, connections, keys });
  // the platform's own feed scheduler (with its domain gate), as the API process builds it
  const { scheduler } = wireFeeds({ config, db, redis: connections.create('command', 'bench'), keys, queues });
  const spawned = await Promise.allSettled(
    Array.from({ length: WORKERS }, (_, i) =>
      spawnPlatform('feeds', { ...env(ctx.redisUrl, ctx.dbUrl, ctx.dataDir, spacingMs), INSTANCE_ID: `bench-feeds-${i + 1}` }, { startTimeoutMs: 120_000 }),
    ),
  );
  const workers: PlatformProcess[] = spawned.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const notStarted = spawned.find((r) => r.status === 'rejected');
    if (notStarted) throw (notStarted as PromiseRejectedResult).reason;
    const user = await db.prisma.user.create({ data: { username: label, passwordHash: 'x' } });
    await db.prisma.feed.createMany({
      data: Array.from({ length: count }, (_, i) => ({
        userId: user.id,
        url: ctx.server.url(`/gen/${label}-${i}.xml?items=${ITEMS}`, `127.0.0.${2 + (i % domains)}`),
      })),
    });
    const feeds = await db.prisma.feed.findMany({ where: { userId: user.id }, select: { id: true, url: true }, orderBy: { id: 'asc' } });
    const firstRequest = ctx.server.requests.length;
    const cpuBefore = workers.reduce((n, w) => n + cpuSeconds(w.pid), 0);
    const t0 = performance.now();
    for (let i = 0; i < feeds.length; i += 100) {
      // as POST /api/feeds does: the first refresh of each feed, with the feed's domain
      await Promise.all(feeds.slice(i, i + 100).map((f) => scheduler.schedulePeriodic(f.id, 0, { trigger: 'initial', domain: domainOf(f.url) })));
    }
    for (;;) {
      const done = await db.prisma.feed.count({ where: { userId: user.id, lastFetchedAt: { not: null } } });
      if (done >= count) break;
      if (performance.now() - t0 > 900_000) throw new Error(`${label}: only ${done} of ${count} refreshed after 15 minutes`);
      await sleep(50);
    }
    const seconds = (performance.now() - t0) / 1000;
    const workerCpuSeconds = workers.reduce((n, w) => n + cpuSeconds(w.pid), 0) - cpuBefore;
    const articles = await db.prisma.article.count({ where: { userId: user.id } });
    const failed = await db.prisma.feed.count({ where: { userId: user.id, status: 'error' } });
    if (failed) throw new Error(`${label}: ${failed} feeds failed`);

    const requests = ctx.server.requests.slice(firstRequest).filter((r) => r.path.startsWith(`/gen/${label}-`));
    const byHost = new Map<string, number[]>();
    for (const r of requests) byHost.set(r.host, [...(byHost.get(r.host) ?? []), r.at]);
    let minGapMs = Infinity;
    let spanSum = 0;
    for (const times of byHost.values()) {
      times.sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) minGapMs = Math.min(minGapMs, times[i]! - times[i - 1]!);
      spanSum += times[times.length - 1]! - times[0]!;
    }
    const firsts = [...byHost.values()].map((times) => times[0]! - (performance.timeOrigin + t0)).sort((a, b) => a - b);
    const gapCount = requests.length - byHost.size;
    const ids = new Set(feeds.map((f) => f.id));
    const jobs = (await queues.queue('feedRefresh').getJobs(['completed'], 0, -1)).filter((j) => ids.has((j.data as { feedId: number }).feedId));
    return {
      ...spec,
      seconds,
      refreshesPerSecond: count / seconds,
      articlesPerSecond: articles / seconds,
      articles,
      minGapMs,
      meanDomainSpanMs: spanSum / byHost.size,
      workerCpuSeconds,
      firstRequestMs: firsts[Math.floor(firsts.length / 2)]!,
      meanGapMs: spanSum / gapCount,
      wakesPerRefresh: jobs.reduce((n, j) => n + j.attemptsStarted, 0) / jobs.length,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await queues.close();
    await connections.close();
    await db.close();
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--parse-only')) return printParse();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-feeds-'));
  const redis = await startRedisServer({ dir: path.join(tmp, 'redis'), appendOnly: false });
  const cluster = await startPostgresCluster();
  const server = await startFeedServer({ hosts: Array.from({ length: DOMAINS }, (_, i) => `127.0.0.${2 + i}`) });
  try {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE bench');
    await admin.end();
    const dbUrl = cluster.url.replace(/\/postgres$/, '/bench');
    await applyMigrations(dbUrl);

    const ctx = { redisUrl: redis.url, dbUrl, dataDir: tmp, server };
    console.log(`feed refresh: ${ITEMS} items per feed, ${WORKERS} feeds worker processes × concurrency ${CONCURRENCY}, ${new Date().toISOString()}`);
    const spaced = await round({ label: 'spaced', feeds: FEEDS, domains: DOMAINS, spacingMs: SPACING_MS }, ctx);
    const baseline = await round({ label: 'unspaced', feeds: FEEDS, domains: DOMAINS, spacingMs: 0 }, ctx);
    // The same spacing with a bound this machine can certainly serve: how close the gate gets to it.
    const small = await round({ label: 'small', feeds: 200, domains: 20, spacingMs: SPACING_MS }, ctx);

    const line = (r: RoundResult, name: string) =>
      `  ${name.padEnd(44)} ${r.seconds.toFixed(1).padStart(6)} s ${r.refreshesPerSecond.toFixed(1).padStart(7)} refreshes/s ${r.articlesPerSecond.toFixed(0).padStart(6)} articles upserted/s` +
      `  min gap/domain ${r.minGapMs.toFixed(0).padStart(5)} ms  worker CPU ${((r.workerCpuSeconds / r.feeds) * 1000).toFixed(1)} ms/refresh\n` +
      `  ${''.padEnd(44)} first request/domain (median) ${r.firstRequestMs.toFixed(0)} ms, mean gap/domain ${r.meanGapMs.toFixed(0)} ms, wake-ups/refresh ${r.wakesPerRefresh.toFixed(2)}`;
    console.log(line(spaced, `${FEEDS} feeds, ${DOMAINS} domains, spacing ${SPACING_MS} ms`));
    console.log(line(baseline, `baseline: same, spacing 0 (machine capacity)`));
    console.log(line(small, `200 feeds, 20 domains, spacing ${SPACING_MS} ms`));
    const bound = (r: RoundResult) => r.domains * (1000 / r.spacingMs);
    const idealSpan = (r: RoundResult) => (r.feeds / r.domains - 1) * r.spacingMs;
    console.log(
      `  ratio to the spacing bound (${bound(spaced)} refreshes/s):            ${(spaced.refreshesPerSecond / bound(spaced)).toFixed(2)}  (target >= 0.80)`,
    );
    console.log(`  ratio to the machine's capacity (baseline):            ${(spaced.refreshesPerSecond / baseline.refreshesPerSecond).toFixed(2)}`);
    console.log(
      `  200/20 round: ratio to its bound (${bound(small)} refreshes/s):      ${(small.refreshesPerSecond / bound(small)).toFixed(2)};  ideal per-domain span ${idealSpan(small)} ms / measured ${small.meanDomainSpanMs.toFixed(0)} ms = ${(idealSpan(small) / small.meanDomainSpanMs).toFixed(2)}`,
    );
    const never = spaced.minGapMs >= SPACING_MS && small.minGapMs >= SPACING_MS;
    console.log(`  spacing never under ${SPACING_MS} ms: ${never ? 'yes' : 'NO'} (min ${Math.min(spaced.minGapMs, small.minGapMs).toFixed(1)} ms)`);
    if (!never) process.exitCode = 1;

    await printParse();
  } finally {
    await server.stop();
    await cluster.stop();
    await redis.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
process.exit(process.exitCode ?? 0);
