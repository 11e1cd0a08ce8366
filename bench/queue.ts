/**
 * `npm run bench:queue`: no-op jobs through the platform's worker factory (metrics, error
 * mapping, per-job logger, payload-validated addBulk) against a plain BullMQ Worker and Queue,
 * on one private redis-server, at concurrency 1, 10 and 50. Prints jobs/s for both and the
 * ratio (target: platform >= 0.9x plain at every concurrency). Median of ROUNDS runs each,
 * alternating which goes first so machine drift hits both sides alike. Also the CPU time this
 * process spent per job (adding and running it), which other load on the machine disturbs far
 * less than jobs/s: the figure to compare two versions of the platform with on a busy machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/logger.js';
import { Metrics } from '../src/metrics/metrics.js';
import { connectionOptions } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys } from '../src/redis/keys.js';
import { createWorker } from '../src/queues/create-worker.js';
import { defaultJobOptions, QueueRegistry } from '../src/queues/registry.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { median } from './stats.js';

const CONCURRENCIES = [1, 10, 50];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const JOBS = (c: number) => Number(process.env.BENCH_JOBS ?? (c === 1 ? 6000 : 20000));
const ADD_BATCH = 1000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-queue-'));
const server = await startRedisServer({ dir });
const config = loadConfig({ REDIS_URL: server.url });
const keys = createKeys('bench');
const admin = new Redis(server.url);

interface Run {
  addPerSec: number;
  jobsPerSec: number;
  /** CPU time of this process (user + system) per job, adding and running it, µs. */
  cpuUsPerJob: number;
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return d.user + d.system;
};

function waitForCount(worker: Worker, n: number): Promise<void> {
  return new Promise((resolve) => {
    let done = 0;
    worker.on('completed', () => {
      done += 1;
      if (done === n) resolve();
    });
  });
}

async function plainRun(c: number, n: number): Promise<Run> {
  await admin.flushall();
  const connection = { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null };
  const queue = new Queue('maintenance', { connection, prefix: keys.bullPrefix, defaultJobOptions: defaultJobOptions(config) });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i += ADD_BATCH) {
    await queue.addBulk(Array.from({ length: Math.min(ADD_BATCH, n - i) }, (_, k) => ({ name: 'noop', data: { task: `t${i + k}` } })));
  }
  const addMs = performance.now() - t0;
  const worker = new Worker('maintenance', async () => undefined, { connection, prefix: keys.bullPrefix, concurrency: c, autorun: false });
  const finished = waitForCount(worker, n);
  const t1 = performance.now();
  void worker.run();
  await finished;
  const runMs = performance.now() - t1;
  const cpuUsPerJob = cpuUs(cpu0) / n;
  await worker.close();
  await queue.close();
  return { addPerSec: (n / addMs) * 1000, jobsPerSec: (n / runMs) * 1000, cpuUsPerJob };
}

async function platformRun(c: number, n: number): Promise<Run> {
  await admin.flushall();
  const logger = silentLogger();
  const connections = new RedisConnections({ kind: 'single', url: server.url }, connectionOptions(config), logger);
  const queues = new QueueRegistry({ config, connections, keys });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i += ADD_BATCH) {
    await queues.addBulk(
      'maintenance',
      Array.from({ length: Math.min(ADD_BATCH, n - i) }, (_, k) => ({ name: 'noop', data: { task: `t${i + k}` } })),
    );
  }
  const addMs = performance.now() - t0;
  const w = createWorker({ config, connections, keys, metrics: new Metrics({ defaultMetrics: false }), logger }, 'maintenance', async () => undefined, {
    concurrency: c,
    autorun: false,
  });
  const finished = waitForCount(w.worker, n);
  const t1 = performance.now();
  void w.worker.run();
  await finished;
  const runMs = performance.now() - t1;
  const cpuUsPerJob = cpuUs(cpu0) / n;
  await w.close();
  await queues.close();
  await connections.close();
  return { addPerSec: (n / addMs) * 1000, jobsPerSec: (n / runMs) * 1000, cpuUsPerJob };
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
console.log(`bench:queue — ${os.cpus().length} cores, Node ${process.version}, redis-server on 127.0.0.1 (AOF everysec), median of ${ROUNDS} rounds`);
console.log('concurrency | jobs  | plain jobs/s | platform jobs/s | ratio | plain addBulk/s | platform addBulk/s | ratio');
const rows: string[] = [];
const cpuRows: string[] = [];
for (const c of CONCURRENCIES) {
  const n = JOBS(c);
  const plain: Run[] = [];
  const platform: Run[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      plain.push(await plainRun(c, n));
      platform.push(await platformRun(c, n));
    } else {
      platform.push(await platformRun(c, n));
      plain.push(await plainRun(c, n));
    }
  }
  const pj = median(plain.map((x) => x.jobsPerSec));
  const fj = median(platform.map((x) => x.jobsPerSec));
  const pa = median(plain.map((x) => x.addPerSec));
  const fa = median(platform.map((x) => x.addPerSec));
  const row = `${String(c).padStart(11)} | ${String(n).padEnd(5)} | ${fmt(pj).padStart(12)} | ${fmt(fj).padStart(15)} | ${(fj / pj).toFixed(2).padStart(5)} | ${fmt(pa).padStart(15)} | ${fmt(fa).padStart(18)} | ${(fa / pa).toFixed(2)}`;
  rows.push(row);
  console.log(row);
  const [pc, fc] = [median(plain.map((x) => x.cpuUsPerJob)), median(platform.map((x) => x.cpuUsPerJob))];
  cpuRows.push(`${String(c).padStart(11)} | ${pc.toFixed(1).padStart(19)} | ${fc.toFixed(1).padStart(22)} | ${(fc / pc).toFixed(2)}`);
}
console.log('concurrency | plain CPU µs per job | platform CPU µs per job | ratio');
for (const row of cpuRows) console.log(row);

admin.disconnect();
await server.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
