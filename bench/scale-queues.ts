/**
 * The scheduling parts of `npm run bench:scale` (bench/scale.ts): IPs and feeds, each scheduled at
 * every step by the platform's own code (the start-up reconciliation of the crawl scheduler; the
 * feeds' chain reconciliation) against plain BullMQ delayed jobs with the same payloads and ids.
 *
 * The rows are bulk-loaded with generate_series, each last crawled (fetched) within the last hour
 * with a two-hour interval, so every pending job falls due one to two hours ahead: nothing of the
 * step's population becomes due while the step runs, and the burst of 1,000 due at once is the
 * only work a worker finds.
 *
 * The plain queue is loaded first (its memory read on its own), and stays: the platform's
 * population is scheduled beside it, and then the steady-state operations and the bursts of the
 * two run in turns in that one Redis, so that both meet the same machine (on a shared machine the
 * load moves wall times more between minutes than any growth does).
 */
import type { Queue } from 'bullmq';
import { Metrics } from '../src/metrics/metrics.js';
import { wireFeeds } from '../src/feeds/wiring.js';
import { reconcileChains } from '../src/feeds/reconcile-chains.js';
import { periodicDedupId } from '../src/feeds/feed-scheduler.js';
import { startBackpressureLoop } from '../src/crawl-scheduling/backpressure-loop.js';
import { reconcile } from '../src/crawl-scheduling/reconcile.js';
import { chainBucket } from '../src/crawl-scheduling/crawl-chain.js';
import { wirePipeline } from '../src/pipeline/wiring.js';
import {
  insertSeries,
  int,
  keyBytes,
  logger,
  mb,
  mean,
  plainQueue,
  reload,
  tableBytes,
  burstsInTurns,
  timeInTurns,
  us,
  usedMemory,
  type Env,
  type ScaleRecord,
} from './scale-support.js';

/** Sequential single adds timed in the steady state (a closed loop's next job, a new chain). */
const STEADY_OPS = 1000;
/** Jobs falling due at the same millisecond. */
const BURST = 1000;
const HOUR = 3_600_000;
/** A first, unreported step, so that the first reported one does not pay for compiling the code paths. */
const WARM_UP = 2000;

/** The delay of row `i`'s next job: one to two hours, as its due time after a crawl in the last hour. */
const delayOf = (i: number) => HOUR + (3600 - 1 - (i % 3600)) * 1000;

interface PlainLoad {
  queue: Queue;
  seconds: number;
  /** CPU µs of the whole addBulk run. */
  cpuUs: number;
  bytes: number;
  jobBytes: number;
  delayedBytes: number;
}

type PlainJob = (i: number) => { name: string; data: object; jobId: string };

/** Plain BullMQ on an empty Redis: `n` delayed jobs by addBulk (1,000 a call), and the memory they took. */
async function plainLoad(env: Env, name: string, n: number, job: PlainJob): Promise<PlainLoad> {
  await env.redis.flushall();
  const queue = plainQueue(env, name);
  await queue.waitUntilReady();
  const mem0 = await usedMemory(env.redis);
  const bulk = await env.meter.measure(async () => {
    for (let lo = 1; lo <= n; lo += 1000) {
      const jobs = [];
      for (let i = lo; i <= Math.min(n, lo + 999); i++) {
        const j = job(i);
        jobs.push({ name: j.name, data: j.data, opts: { jobId: j.jobId, delay: delayOf(i) } });
      }
      await queue.addBulk(jobs);
    }
  });
  const bytes = (await usedMemory(env.redis)) - mem0;
  const jobBytes = await keyBytes(env.redis, queue.toKey(job(1).jobId));
  const delayedBytes = await keyBytes(env.redis, queue.keys.delayed!);
  return { queue, seconds: bulk.ms / 1000, cpuUs: bulk.cpuUs, bytes, jobBytes, delayedBytes };
}

/** The plain queue's single add of job `i` (a steady-state add) and a burst's addBulk, ids past the loaded ones. */
function plainOps(plain: PlainLoad, n: number, job: PlainJob) {
  return {
    add: (k: number) => {
      const j = job(n + 1 + k);
      return plain.queue.add(j.name, j.data, { jobId: j.jobId, delay: delayOf(k) });
    },
    burst: (round: number, due: number) =>
      plain.queue.addBulk(
        Array.from({ length: BURST }, (_, k) => {
          const j = job(n + STEADY_OPS + round * BURST + k + 1);
          return { name: j.name, data: j.data, opts: { jobId: j.jobId, delay: due - Date.now() } };
        }),
      ),
  };
}

// ---- IPs ------------------------------------------------------------------------------------

export async function benchIps(env: Env, steps: number[], record: ScaleRecord): Promise<void> {
  const { db, redis, keys } = env;
  const { pagesOnSale, pagesSold } = env.config.pipeline;
  console.log(
    `\nIPs scheduled: start-up reconciliation, steady state and a burst of ${int(BURST)} due at once; plain BullMQ delayed jobs (same payloads and ids)`,
  );
  for (const n of [WARM_UP, ...steps]) {
    const loadSeconds = await reload(db.pool, 'ips', () =>
      insertSeries(
        db.pool,
        `INSERT INTO ips (name, keyword, interval_seconds, last_crawled_at, updated_at)
         SELECT 'IP ' || i, 'kw' || i, 7200, now() - make_interval(secs => 1 + i % 3600), now() FROM generate_series($1::int, $2::int) i`,
        1,
        n,
      ),
    );
    await db.pool.query('TRUNCATE processed_results');

    const plainJob: PlainJob = (i) => {
      const taskId = `ip${i}-${'0'.repeat(8)}`; // the scheduler's id shape (task-ids.ts)
      return { name: 'crawl', jobId: taskId, data: { ipId: i, keyword: `kw${i}`, taskId, pagesOnSale, pagesSold } };
    };
    const plain = await plainLoad(env, 'plain-crawl', n, plainJob);
    const plainOp = plainOps(plain, n, plainJob);

    const { scheduler, ips } = wirePipeline(env.ctx);
    const crawlQueue = scheduler.queues()[0]!;
    await crawlQueue.waitUntilReady();
    const mem0 = await usedMemory(redis);
    const start = await env.meter.measure(() => reconcile({ scheduler, ips, redis, logger, spreadSeconds: 3600, leadMs: 60_000 }));
    const first = start.value;
    const startSeconds = start.ms / 1000;
    if (first.scheduled !== n) throw new Error(`reconciliation scheduled ${first.scheduled} of ${n} IPs`);
    const bytes = (await usedMemory(redis)) - mem0;
    const task1 = (await scheduler.chain.current(1))!;
    const jobBytes = await keyBytes(redis, crawlQueue.toKey(task1));
    const delayedBytes = await keyBytes(redis, crawlQueue.keys.delayed!);
    const bucketBytes = await keyBytes(redis, keys.crawlChain(chainBucket(1)));
    const versionBytes = await keyBytes(redis, keys.ipDetailCacheVersion(1));
    const info = await redis.info('memory');

    const recheck = await env.meter.measure(() => reconcile({ scheduler, ips, redis, logger, spreadSeconds: 3600, leadMs: 60_000 }));
    const again = recheck.value;
    const recheckSeconds = recheck.ms / 1000;
    if (again.scheduled || again.reAdded || again.advanced || again.orphansRemoved || again.released)
      throw new Error('a second reconciliation changed something');

    // Closed loop: a result moves an IP's chain on and schedules its next crawl (IPs 1..1,000),
    // in turns with the plain queue's single adds.
    const froms = await Promise.all(Array.from({ length: STEADY_OPS }, (_, k) => scheduler.chain.current(k + 1)));
    const { ours: advance, plain: plainAdd } = await timeInTurns(
      env.meter,
      STEADY_OPS,
      (k) => scheduler.advance({ id: k + 1, keyword: `kw${k + 1}` }, froms[k]!, Date.now() + 2 * HOUR),
      plainOp.add,
    );

    // A burst: 1,000 more IPs due at the same millisecond, with the leader's backpressure loop
    // running at a threshold that does not bind (bench:pipeline C).
    const settings = { ...env.config.pipeline, backpressureThreshold: 2000, batchSize: 2000 };
    const term = { task: 'crawl-scheduler', token: 1, value: 'bench#1', signal: new AbortController().signal, isCurrent: () => true };
    const stopLoop = startBackpressureLoop({ scheduler, redis, settings, metrics: new Metrics({ defaultMetrics: false }), logger }, term);
    const { ours: late, plain: plainLate } = await burstsInTurns(
      env,
      BURST,
      {
        queueName: crawlQueue.name,
        schedule: (round, due) =>
          scheduler.scheduleMany(
            Array.from({ length: BURST }, (_, k) => ({ id: n + round * BURST + k + 1, keyword: `kw${n + round * BURST + k + 1}`, dueAt: due })),
            { minDelayMs: 0 },
          ),
      },
      { queueName: plain.queue.name, schedule: plainOp.burst },
    );
    await stopLoop();
    await plain.queue.close();
    const sizes = await tableBytes(db.pool, ['ips']);

    if (n === WARM_UP) continue;
    const perIp = (s: number) => (s / n) * 1e6;
    const cpu = (us: number) => `${(us / n).toFixed(1)} µs CPU`;
    console.log(`  ${int(n)} IPs (bulk load ${loadSeconds.toFixed(1)} s; ips table ${mb(sizes.ips!)})`);
    console.log(
      `    start-up reconciliation ${startSeconds.toFixed(2)} s = ${perIp(startSeconds).toFixed(1)} µs (${cpu(start.cpuUs)}) per IP   | plain addBulk ${plain.seconds.toFixed(2)} s = ${perIp(plain.seconds).toFixed(1)} µs (${cpu(plain.cpuUs)}) per job   → ${(startSeconds / plain.seconds).toFixed(2)}x`,
    );
    console.log(
      `    Redis memory +${mb(bytes)} = ${(bytes / n).toFixed(0)} B per IP   | plain +${mb(plain.bytes)} = ${(plain.bytes / n).toFixed(0)} B per job   → ${(bytes / plain.bytes).toFixed(2)}x` +
        `   (used_memory ${/used_memory_human:(\S+)/.exec(info)![1]} with the plain queue's)`,
    );
    console.log(
      `    MEMORY USAGE: crawl job hash ${jobBytes} B, delayed set ${(delayedBytes / n).toFixed(0)} B per entry, chain bucket ${(bucketBytes / 100).toFixed(0)} B per IP, ` +
        `detail-cache version key ${versionBytes} B   | plain: job hash ${plain.jobBytes} B, delayed set ${(plain.delayedBytes / n).toFixed(0)} B per entry`,
    );
    console.log(`    reconciliation with nothing to do ${recheckSeconds.toFixed(2)} s = ${perIp(recheckSeconds).toFixed(1)} µs (${cpu(recheck.cpuUs)}) per IP`);
    console.log(
      `    closed loop (advance: chain move, next crawl, the old job removed if pending), ${int(STEADY_OPS)} one at a time: mean ${us(mean(advance.times))} (${us(advance.cpuUs / 1000 / STEADY_OPS)} CPU), ` +
        `p99 ${us(advance.times[Math.floor(STEADY_OPS * 0.99)]!)}   | plain add: mean ${us(mean(plainAdd.times))} (${us(plainAdd.cpuUs / 1000 / STEADY_OPS)} CPU)`,
    );
    console.log(
      `    ${int(BURST)} due at once, concurrency 50: lateness p99 ${late.p99.toFixed(0)} ms (p50 ${late.p50.toFixed(0)}; p99 of each burst ${late.p99s.join(', ')})   | plain p99 ${plainLate.p99.toFixed(0)} ms (${plainLate.p99s.join(', ')})`,
    );

    record.add({
      part: 'IPs',
      name: 'start-up reconciliation, time per IP',
      unit: 'µs',
      step: n,
      ours: perIp(startSeconds),
      base: perIp(plain.seconds),
      cpu: { ours: start.cpuUs / n, base: plain.cpuUs / n },
    });
    record.add({ part: 'IPs', name: 'Redis memory per IP', unit: 'B', step: n, ours: bytes / n, base: plain.bytes / n });
    record.add({
      part: 'IPs',
      name: 'reconciliation with nothing to do, per IP',
      unit: 'µs',
      step: n,
      ours: perIp(recheckSeconds),
      cpu: { ours: recheck.cpuUs / n },
    });
    record.add({
      part: 'IPs',
      name: 'closed loop: next crawl (advance), mean',
      unit: 'µs',
      step: n,
      ours: mean(advance.times) * 1000,
      base: mean(plainAdd.times) * 1000,
      cpu: { ours: advance.cpuUs / STEADY_OPS, base: plainAdd.cpuUs / STEADY_OPS },
    });
    record.add({ part: 'IPs', name: `lateness p99, ${int(BURST)} due at once`, unit: 'ms', step: n, ours: late.p99, base: plainLate.p99 });
  }
  await redis.flushall();
}

// ---- feeds ----------------------------------------------------------------------------------

export async function benchFeeds(env: Env, steps: number[], record: ScaleRecord): Promise<void> {
  const { db, redis } = env;
  console.log(
    `\nFeeds scheduled: chain reconciliation on an empty Redis (start-up), again (steady state), new chains, a burst of ${int(BURST)}; plain BullMQ delayed jobs`,
  );
  for (const n of [WARM_UP, ...steps]) {
    let userId = 0;
    const loadSeconds = await reload(db.pool, 'feeds', async () => {
      const { rows } = await db.pool.query<{ id: number }>(
        `INSERT INTO users (username, password_hash, updated_at) VALUES ('bench-scale-feeds', 'x', now())
         ON CONFLICT (username) DO UPDATE SET updated_at = now() RETURNING id`,
      );
      userId = rows[0]!.id;
      await insertSeries(
        db.pool,
        `INSERT INTO feeds (user_id, url, refresh_interval_minutes, status, last_fetched_at, updated_at)
         SELECT ${userId}, 'https://feeds' || (i % 1000) || '.example/' || i || '.xml', 120, 'ok', now() - make_interval(secs => 1 + i % 3600), now()
           FROM generate_series($1::int, $2::int) i`,
        1,
        n,
      );
    });

    const plainJob: PlainJob = (i) => ({
      name: 'refresh-periodic',
      jobId: `feed-${i}-00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, // the scheduler's id shape (feed-scheduler.ts)
      data: { feedId: i, trigger: 'periodic' },
    });
    const plain = await plainLoad(env, 'plain-feed-refresh', n, plainJob);
    const plainOp = plainOps(plain, n, plainJob);

    const { feeds, scheduler } = wireFeeds(env.ctx);
    const refreshQueue = env.queues.everywhere('feedRefresh')[0]!;
    await refreshQueue.waitUntilReady();
    const mem0 = await usedMemory(redis);
    const start = await env.meter.measure(() => reconcileChains({ feeds, scheduler, logger }));
    const first = start.value;
    const startSeconds = start.ms / 1000;
    if (first.repaired !== n) throw new Error(`chain reconciliation created ${first.repaired} of ${n} chains`);
    const bytes = (await usedMemory(redis)) - mem0;
    const owner = (await refreshQueue.getDeduplicationJobId(periodicDedupId(1)))!;
    const jobBytes = await keyBytes(redis, refreshQueue.toKey(owner));
    const dedupBytes = await keyBytes(redis, refreshQueue.toKey(`de:${periodicDedupId(1)}`));
    const delayedBytes = await keyBytes(redis, refreshQueue.keys.delayed!);
    const info = await redis.info('memory');

    const recheck = await env.meter.measure(() => reconcileChains({ feeds, scheduler, logger }));
    const again = recheck.value;
    const recheckSeconds = recheck.ms / 1000;
    if (again.repaired) throw new Error(`a second chain reconciliation repaired ${again.repaired}`);

    // New chains (a subscription's first refresh), one at a time, with n chains in place, in
    // turns with the plain queue's single adds.
    const { ours: add, plain: plainAdd } = await timeInTurns(
      env.meter,
      STEADY_OPS,
      (k) => scheduler.schedulePeriodic(n + 1 + k, delayOf(k), { trigger: 'initial' }),
      plainOp.add,
    );

    // 1,000 chains falling due at the same millisecond (started in one bulk add, as the reconciler does).
    const { ours: late, plain: plainLate } = await burstsInTurns(
      env,
      BURST,
      {
        queueName: refreshQueue.name,
        schedule: (round, due) =>
          scheduler.startChains(Array.from({ length: BURST }, (_, k) => ({ feedId: n + STEADY_OPS + round * BURST + k + 1, delayMs: due - Date.now() }))),
      },
      { queueName: plain.queue.name, schedule: plainOp.burst },
    );
    await plain.queue.close();
    const sizes = await tableBytes(db.pool, ['feeds']);

    if (n === WARM_UP) continue;
    const perFeed = (s: number) => (s / n) * 1e6;
    const cpu = (us: number) => `${(us / n).toFixed(1)} µs CPU`;
    console.log(`  ${int(n)} feeds (bulk load ${loadSeconds.toFixed(1)} s; feeds table ${mb(sizes.feeds!)})`);
    console.log(
      `    chain reconciliation, empty Redis ${startSeconds.toFixed(2)} s = ${perFeed(startSeconds).toFixed(1)} µs (${cpu(start.cpuUs)}) per feed   | plain addBulk ${plain.seconds.toFixed(2)} s = ${perFeed(plain.seconds).toFixed(1)} µs (${cpu(plain.cpuUs)}) per job   → ${(startSeconds / plain.seconds).toFixed(2)}x`,
    );
    console.log(
      `    Redis memory +${mb(bytes)} = ${(bytes / n).toFixed(0)} B per feed   | plain +${mb(plain.bytes)} = ${(plain.bytes / n).toFixed(0)} B per job   → ${(bytes / plain.bytes).toFixed(2)}x` +
        `   (used_memory ${/used_memory_human:(\S+)/.exec(info)![1]} with the plain queue's)`,
    );
    console.log(
      `    MEMORY USAGE: refresh job hash ${jobBytes} B, deduplication key ${dedupBytes} B, delayed set ${(delayedBytes / n).toFixed(0)} B per entry   | plain: job hash ${plain.jobBytes} B, delayed set ${(plain.delayedBytes / n).toFixed(0)} B per entry`,
    );
    console.log(
      `    chain reconciliation with nothing to do ${recheckSeconds.toFixed(2)} s = ${perFeed(recheckSeconds).toFixed(1)} µs (${cpu(recheck.cpuUs)}) per feed`,
    );
    console.log(
      `    new chain (schedulePeriodic), ${int(STEADY_OPS)} one at a time: mean ${us(mean(add.times))} (${us(add.cpuUs / 1000 / STEADY_OPS)} CPU), p99 ${us(add.times[Math.floor(STEADY_OPS * 0.99)]!)}` +
        `   | plain add: mean ${us(mean(plainAdd.times))} (${us(plainAdd.cpuUs / 1000 / STEADY_OPS)} CPU)`,
    );
    console.log(
      `    ${int(BURST)} due at once, concurrency 50: lateness p99 ${late.p99.toFixed(0)} ms (p50 ${late.p50.toFixed(0)}; p99 of each burst ${late.p99s.join(', ')})   | plain p99 ${plainLate.p99.toFixed(0)} ms (${plainLate.p99s.join(', ')})`,
    );

    record.add({
      part: 'feeds',
      name: 'chain reconciliation (start-up), per feed',
      unit: 'µs',
      step: n,
      ours: perFeed(startSeconds),
      base: perFeed(plain.seconds),
      cpu: { ours: start.cpuUs / n, base: plain.cpuUs / n },
    });
    record.add({ part: 'feeds', name: 'Redis memory per feed', unit: 'B', step: n, ours: bytes / n, base: plain.bytes / n });
    record.add({
      part: 'feeds',
      name: 'reconciliation with nothing to do, per feed',
      unit: 'µs',
      step: n,
      ours: perFeed(recheckSeconds),
      cpu: { ours: recheck.cpuUs / n },
    });
    record.add({
      part: 'feeds',
      name: 'new chain (schedulePeriodic), mean',
      unit: 'µs',
      step: n,
      ours: mean(add.times) * 1000,
      base: mean(plainAdd.times) * 1000,
      cpu: { ours: add.cpuUs / STEADY_OPS, base: plainAdd.cpuUs / STEADY_OPS },
    });
    record.add({ part: 'feeds', name: `lateness p99, ${int(BURST)} due at once`, unit: 'ms', step: n, ours: late.p99, base: plainLate.p99 });
  }
  await redis.flushall();
}
