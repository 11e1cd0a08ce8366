/**
 * `npm run bench:cluster`: crawl-result-sized no-op jobs through the platform on a loopback
 * 3-master Redis Cluster, with QUEUE_SHARDS 1 (the baseline, measured in the same run) and 6.
 *
 * Through the platform: the producer is a QueueRegistry over a cluster QueueLayout (payload
 * validation, one addBulk per partition), the consumer createWorker's workers for crawl-result
 * (one BullMQ Worker per partition, the concurrency shared out among them), both on
 * RedisConnections with the cluster target, as start-platform builds them. Each job is a valid
 * crawl-result payload carrying its result (BENCH_ITEMS items, default 500: 250 on sale, 250 sold,
 * as bench:pipeline's results), ~115 kB of JSON; its partition key is its IP id, every job its own IP.
 *
 * Processes: the producer (addBulk in batches of ADD_BATCH, one batch at a time) and
 * BENCH_WORKER_PROCESSES worker processes (default 1, BENCH_CONCURRENCY jobs at once each, default
 * 48 so that 6 partitions get 8 each) are child processes of this one, which only starts them,
 * polls the completed counts and reads the CPU counters. The run is timed from the producer's
 * first addBulk to the last job completed (the workers take jobs while it adds). One process
 * each is enough on 2 cores: the three masters, the producer and the workers already share them,
 * so the machine's CPU, not one master, bounds jobs/s here; the CPU figures say where it goes.
 *
 * Reported per QUEUE_SHARDS (median of BENCH_ROUNDS rounds, the order alternating): jobs/s end to
 * end and its ratio to QUEUE_SHARDS=1, the producer's addBulk rate, each master's share of the
 * Redis CPU time (INFO cpu used_cpu_sys + used_cpu_user, before and after each run, summed over
 * the rounds), and where the CPU went: Redis (AOF rewrites included), producer and workers in CPU
 * µs a job, and the share of the CPU time busy over the run: by the bench's processes, and on the whole
 * machine (shared with other work). Target (issue 19): with 6 partitions no master above
 * 45% of the Redis CPU, and jobs/s not lower than with 1.
 *
 * Starts its own cluster (test/support/redis-cluster.ts) and stops it, and every child, by pid.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/logger.js';
import { Metrics } from '../src/metrics/metrics.js';
import { createWorker } from '../src/queues/create-worker.js';
import { QueueLayout } from '../src/queues/layout.js';
import type { CrawledItem, CrawlResultPayload } from '../src/queues/declarations/crawl.js';
import { QueueRegistry } from '../src/queues/registry.js';
import { connectionOptions } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys } from '../src/redis/keys.js';
import { configuredRedis } from '../src/services/provide-services.js';
import { spawnTsProcess, type PlatformProcess } from '../test/support/processes.js';
import { startTestRedisCluster, type TestRedisCluster } from '../test/support/redis-cluster.js';
import { fmt, processCpuUs } from './http-load.js';
import { median, medianBy } from './stats.js';

const SHARDS = [1, 6];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const JOBS = Number(process.env.BENCH_JOBS ?? 3000);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 500);
const WORKER_PROCESSES = Number(process.env.BENCH_WORKER_PROCESSES ?? 1);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 48);
const ADD_BATCH = 100;
/** Longest a run may take before it is called failed (a lost job would otherwise hang it). */
const RUN_TIMEOUT_MS = 10 * 60_000;

// ---- The platform side (child processes) ---------------------------------------------------

/** A process's queues on the cluster, as start-platform builds them (without the recorded layouts: every run starts empty). */
function platformQueues(seeds: string, shards: number) {
  const config = loadConfig({ REDIS_CLUSTER_NODES: seeds, QUEUE_SHARDS: String(shards) });
  const target = configuredRedis(config)!; // { kind: 'cluster', nodes }
  const logger = silentLogger();
  const connections = new RedisConnections(target, connectionOptions(config), logger);
  const keys = createKeys(config.redis.prefix);
  const layout = new QueueLayout({ prefix: config.redis.prefix, cluster: true, shards });
  const registry = new QueueRegistry({ config, connections, keys, layout });
  return { config, connections, keys, logger, registry };
}

/** A crawl's result of `items` items (half on sale, half sold), its fields shaped like the fixture marketplace's listings. */
function crawlResult(ipId: number, items: number, crawledAt: string): CrawlResultPayload {
  const item = (n: number): CrawledItem => {
    const sourceId = `m${ipId}${String(n).padStart(6, '0')}`;
    return {
      sourceId,
      title: `vintage camera leather strap mint #${ipId}${n}`,
      price: 900 + ((n * 37) % 5000),
      imageUrl: `https://marketplace.example/img/${sourceId}.jpg`,
      itemUrl: `https://marketplace.example/item/${sourceId}`,
      status: n < items / 2 ? 'on_sale' : 'sold',
    };
  };
  return {
    ipId,
    taskId: `bench-${ipId}`,
    items: Array.from({ length: items }, (_, n) => item(n)),
    totalFound: items,
    pagesCrawled: 10,
    crawledAt,
    errors: [],
    crawledBy: 'bench-cluster-producer',
  };
}

/** `work <seeds> <shards> <concurrency>`: crawl-result workers; on SIGTERM prints what they did as a JSON line. */
async function work(seeds: string, shards: number, concurrency: number): Promise<void> {
  const { config, connections, keys, logger, registry } = platformQueues(seeds, shards);
  const w = createWorker(
    { config, connections, keys, logger, metrics: new Metrics({ defaultMetrics: false }), queues: registry },
    'crawlResult',
    async () => undefined,
    { concurrency },
  );
  let completed = 0;
  let failed = 0;
  let lastCompletedAt = 0;
  for (const worker of w.workers) {
    worker.on('completed', () => {
      completed += 1;
      lastCompletedAt = Date.now();
    });
    worker.on('failed', () => (failed += 1));
  }
  await Promise.all(w.workers.map((x) => x.waitUntilReady()));
  const stop = async () => {
    await w.close();
    await connections.close();
    console.log(JSON.stringify({ completed, failed, lastCompletedAt }));
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  console.log(`worker ready: ${w.queueNames.join(', ')}`);
}

/** `produce <seeds> <shards> <jobs> <items>`: adds the jobs once sent SIGUSR2; prints when it started and finished as a JSON line. */
async function produce(seeds: string, shards: number, jobs: number, items: number): Promise<void> {
  const { connections, registry } = platformQueues(seeds, shards);
  await Promise.all(registry.everywhere('crawlResult').map((q) => q.waitUntilReady()));
  await new Promise<void>((resolve) => {
    process.once('SIGUSR2', () => resolve());
    console.log('producer ready');
  });
  const startedAt = Date.now();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < jobs; i += ADD_BATCH) {
    const crawledAt = new Date().toISOString();
    await registry.addBulk(
      'crawlResult',
      Array.from({ length: Math.min(ADD_BATCH, jobs - i) }, (_, k) => {
        const ipId = 1 + i + k; // every job its own IP: partition ipId % shards
        return { name: 'result', data: crawlResult(ipId, items, crawledAt), partitionKey: ipId };
      }),
    );
  }
  const addedAt = Date.now();
  const cpu = process.cpuUsage(cpu0);
  await registry.close();
  await connections.close();
  console.log(JSON.stringify({ startedAt, addedAt, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
  process.exit(0);
}

// ---- The bench (this process) --------------------------------------------------------------

interface RunResult {
  shards: number;
  jobsPerSec: number;
  addPerSec: number;
  seconds: number;
  /** Redis CPU seconds of each master over the run (INFO cpu used_cpu_sys + used_cpu_user). */
  redisCpu: number[];
  /** CPU seconds of the masters' fork children over the run (AOF rewrites; not in redisCpu). */
  redisChildCpu: number;
  producerCpu: number;
  workerCpu: number;
  /** Share of the machine's CPU time busy over the run, whoever used it (the machine is shared). */
  machineBusy: number;
}

/** INFO cpu of one node: its own CPU seconds and its children's. */
async function infoCpu(client: Redis): Promise<{ own: number; children: number }> {
  const text = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { own: field('used_cpu_sys') + field('used_cpu_user'), children: field('used_cpu_sys_children') + field('used_cpu_user_children') };
}

const cpuSeconds = (pid: number) => processCpuUs(pid) / 1e6;

/** Busy and total CPU time of the whole machine so far (/proc/stat, clock ticks). */
function machineCpu(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy, total: busy + idle! + iowait! };
}

/** The JSON line a child printed last. */
function lastJson<T>(p: PlatformProcess): T {
  const line = p
    .output()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no result line from pid ${p.pid}:\n${p.output()}`);
  return JSON.parse(line) as T;
}

async function run(cluster: TestRedisCluster, masters: Redis[], shards: number, children: Set<PlatformProcess>): Promise<RunResult> {
  await Promise.all(masters.map((m) => m.flushall()));
  const spawn = async (args: string[], ready: string) => {
    const p = await spawnTsProcess(
      'bench/cluster.ts',
      args,
      {},
      { name: `bench/cluster.ts ${args[0]}`, ready: (out) => out.includes(ready), startTimeoutMs: 120_000 },
    );
    children.add(p);
    return p;
  };
  const workers = await Promise.all(
    Array.from({ length: WORKER_PROCESSES }, () => spawn(['work', cluster.seeds, String(shards), String(CONCURRENCY)], 'worker ready')),
  );
  const producer = await spawn(['produce', cluster.seeds, String(shards), String(JOBS), String(ITEMS)], 'producer ready');
  // The bench's own view of the queues: only completed and failed counts, polled.
  const { connections, registry } = platformQueues(cluster.seeds, shards);
  try {
    const queues = registry.everywhere('crawlResult');
    await Promise.all(queues.map((q) => q.waitUntilReady()));
    const before = await Promise.all(masters.map(infoCpu));
    const workerCpu0 = workers.map((w) => cpuSeconds(w.pid));
    const machine0 = machineCpu();
    producer.signal('SIGUSR2');
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    for (;;) {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts('completed', 'failed')));
      const completed = counts.reduce((s, c) => s + (c.completed ?? 0), 0);
      const failed = counts.reduce((s, c) => s + (c.failed ?? 0), 0);
      if (failed > 0) throw new Error(`${failed} no-op jobs failed`);
      const gone = [producer, ...workers].find((p) => p.child.exitCode !== null && p.child.exitCode !== 0);
      if (gone) throw new Error(`a child process failed (exit ${gone.child.exitCode}):\n${gone.output()}`);
      const signalled = [producer, ...workers].find((p) => p.child.signalCode !== null);
      if (signalled) throw new Error(`a child process was killed (${signalled.child.signalCode}):\n${signalled.output()}`);
      if (completed >= JOBS) break;
      if (Date.now() > deadline) throw new Error(`only ${completed} of ${JOBS} jobs completed in ${RUN_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await Promise.all(masters.map(infoCpu));
    const machine1 = machineCpu();
    const workerCpu = workers.reduce((s, w, i) => s + cpuSeconds(w.pid) - workerCpu0[i]!, 0);
    if ((await producer.exited) !== 0) throw new Error(`producer failed:\n${producer.output()}`);
    const { startedAt, addedAt, cpuSeconds: producerCpu } = lastJson<{ startedAt: number; addedAt: number; cpuSeconds: number }>(producer);
    for (const w of workers) await w.stop(30_000);
    const done = workers.map((w) => lastJson<{ completed: number; failed: number; lastCompletedAt: number }>(w));
    const completed = done.reduce((s, d) => s + d.completed, 0);
    const failed = done.reduce((s, d) => s + d.failed, 0);
    if (completed !== JOBS || failed) throw new Error(`the workers completed ${completed} jobs (${failed} failed), ${JOBS} were added`);
    const seconds = (Math.max(...done.map((d) => d.lastCompletedAt)) - startedAt) / 1000;
    return {
      shards,
      seconds,
      jobsPerSec: JOBS / seconds,
      addPerSec: JOBS / ((addedAt - startedAt) / 1000),
      redisCpu: after.map((a, i) => a.own - before[i]!.own),
      redisChildCpu: after.reduce((s, a, i) => s + a.children - before[i]!.children, 0),
      producerCpu,
      workerCpu,
      machineBusy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
    };
  } finally {
    for (const p of [producer, ...workers]) {
      await p.stop(30_000).catch(() => undefined);
      children.delete(p);
    }
    await registry.close();
    await connections.close();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const children = new Set<PlatformProcess>();
  let cluster: TestRedisCluster | undefined;
  let masters: Redis[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const p of children) await p.stop(10_000).catch(() => undefined);
      for (const m of masters) m.disconnect();
      await cluster?.destroy();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  try {
    for (const [name, value, least] of [
      ['BENCH_ROUNDS', ROUNDS, 1],
      ['BENCH_JOBS', JOBS, 1],
      ['BENCH_ITEMS', ITEMS, 0],
      ['BENCH_WORKER_PROCESSES', WORKER_PROCESSES, 1],
      ['BENCH_CONCURRENCY', CONCURRENCY, 1],
    ] as const) {
      if (!Number.isInteger(value) || value < least) throw new Error(`${name} must be an integer >= ${least} (got ${value})`);
    }
    cluster = await startTestRedisCluster({ masters: 3 });
    masters = cluster.nodes.map((n) => new Redis({ host: '127.0.0.1', port: n.port, maxRetriesPerRequest: 1 }));
    const cores = os.availableParallelism();
    console.log(
      `bench:cluster — ${new Date().toISOString()}, ${cores} cores, Node ${process.version}, 3-master Redis Cluster on 127.0.0.1 (AOF everysec), load average ${load()}`,
    );
    console.log(
      `${JOBS} crawl-result jobs of ${ITEMS} items (${fmt(Buffer.byteLength(JSON.stringify(crawlResult(JOBS, ITEMS, new Date().toISOString()))) / 1000)} kB) a run, addBulk ${ADD_BATCH} at a time, ${WORKER_PROCESSES} worker process(es) at concurrency ${CONCURRENCY}, median of ${ROUNDS} rounds`,
    );
    const results = new Map<number, RunResult[]>(SHARDS.map((s) => [s, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const shards of r % 2 === 0 ? SHARDS : [...SHARDS].reverse()) {
        const res = await run(cluster, masters, shards, children);
        results.get(shards)!.push(res);
        const total = res.redisCpu.reduce((a, b) => a + b, 0);
        console.log(
          `  round ${r + 1}, QUEUE_SHARDS=${shards}: ${fmt(res.jobsPerSec)} jobs/s (${res.seconds.toFixed(1)} s), addBulk ${fmt(res.addPerSec)}/s, ` +
            `Redis CPU ${res.redisCpu.map((c) => `${c.toFixed(2)} s`).join(' / ')} (${res.redisCpu.map((c) => pct(c / total)).join(' / ')}), ` +
            `AOF rewrites ${res.redisChildCpu.toFixed(2)} s, producer ${res.producerCpu.toFixed(2)} s, workers ${res.workerCpu.toFixed(2)} s; machine busy ${pct(res.machineBusy)}, load ${load()}`,
        );
      }
    }

    console.log('');
    console.log(
      'QUEUE_SHARDS | jobs/s | ratio | addBulk/s | Redis CPU share per master | max share | CPU µs a job: Redis / producer / workers | CPU busy: bench / machine',
    );
    const base = median(results.get(1)!.map((x) => x.jobsPerSec));
    const summary: { shards: number; ratio: number; maxShare: number }[] = [];
    for (const shards of SHARDS) {
      const rs = results.get(shards)!;
      const jobsPerSec = median(rs.map((x) => x.jobsPerSec));
      const mid = medianBy(rs, (x) => x.jobsPerSec);
      const perMaster = masters.map((_, i) => rs.reduce((s, x) => s + x.redisCpu[i]!, 0));
      const total = perMaster.reduce((a, b) => a + b, 0);
      const shares = perMaster.map((c) => c / total);
      const maxShare = Math.max(...shares);
      const redis = mid.redisCpu.reduce((a, b) => a + b, 0) + mid.redisChildCpu;
      const perJob = (x: number) => fmt((x / JOBS) * 1e6);
      const bench = (redis + mid.producerCpu + mid.workerCpu) / (mid.seconds * cores);
      summary.push({ shards, ratio: jobsPerSec / base, maxShare });
      console.log(
        `${String(shards).padStart(12)} | ${fmt(jobsPerSec).padStart(6)} | ${(jobsPerSec / base).toFixed(2).padStart(5)} | ${fmt(median(rs.map((x) => x.addPerSec))).padStart(9)} | ` +
          `${shares.map(pct).join(' / ').padEnd(26)} | ${pct(maxShare).padStart(9)} | ${`${perJob(redis)} / ${perJob(mid.producerCpu)} / ${perJob(mid.workerCpu)}`.padEnd(39)} | ${pct(bench)} / ${pct(mid.machineBusy)}`,
      );
    }
    const six = summary.find((s) => s.shards === 6)!;
    console.log(
      `target (QUEUE_SHARDS=6): max share <= 45%: ${six.maxShare <= 0.45 ? 'met' : 'NOT met'} (${pct(six.maxShare)}); jobs/s >= QUEUE_SHARDS=1: ${six.ratio >= 1 ? 'met' : 'NOT met'} (${six.ratio.toFixed(2)}x)`,
    );
    console.log(`load average at the end ${load()}`);
  } finally {
    await cleanup();
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'work') await work(args[0]!, Number(args[1]), Number(args[2]));
else if (mode === 'produce') await produce(args[0]!, Number(args[1]), Number(args[2]), Number(args[3]));
else {
  await main();
  process.exit(0);
}
