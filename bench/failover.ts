/**
 * What waiting for a replica costs (`npm run bench:failover`): REDIS_REPLICA_ACKS=1 (WAIT after
 * each write that must survive a failover, src/redis/replica-ack.ts) against no wait, in the same
 * run, on a master with one replica (two redis-servers on loopback, AOF everysec).
 *
 * - HTTP (bench/http-load.ts' method: servers pinned away from the load generator and Redis, each
 *   warmed up, interleaved rounds, the median round): message appends (POST
 *   /api/sessions/:id/messages: cache append and persist-buffer push, each followed by WAIT) and
 *   pool pops (POST /api/pools/titles/:g/pop: the pop script, then WAIT), at 1 and 32 clients, one
 *   api process per setting, both on the same Redis and database;
 * - chain job adds (in this process): crawl jobs added through the queue registry, as the pipeline
 *   adds an IP's next crawl (a BullMQ add, then WAIT), 1 and 32 at a time.
 *
 * Prints each figure for both settings and the ratio (wait / no wait). On loopback a replica
 * acknowledges within microseconds; over a network each confirmed write also waits about one
 * round trip to the replica. BENCH_ROUNDS (default 3) sets the rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logging/logger.js';
import { newTaskId } from '../src/crawl-scheduling/task-ids.js';
import { encodeItem } from '../src/pools/pool-item.js';
import { QueueRegistry } from '../src/queues/registry.js';
import { connectionOptions } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys } from '../src/redis/keys.js';
import { replicaAckSettings } from '../src/redis/replica-ack.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { testEnv } from '../test/support/env.js';
import type { PlatformProcess } from '../test/support/processes.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import {
  adminToken,
  createBenchDatabase,
  fmt,
  load,
  ms,
  pinLoadToCpu0,
  pinToLoadCpu,
  rate,
  spawnServer,
  unpinLoad,
  type LoadResult,
  type Pinning,
  type Target,
} from './http-load.js';
import { medianBy, percentile } from './stats.js';

const RUN_MS = 3000;
const WARMUP_MS = 800;
const PREWARM_MS = 3000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENTS = [1, 32];
const CONTENT = 'A benchmark message of about one hundred bytes, like a short chat turn between a user and a model.';
const MODES = [
  { name: 'no wait', acks: '0', group: 1 },
  { name: 'REDIS_REPLICA_ACKS=1', acks: '1', group: 2 },
] as const;
/** Items put in each pool before a run: more than a run pops. */
const POOL_FILL = 100_000;

function env(redisUrl: string, databaseUrl: string, dataDir: string, acks: string): NodeJS.ProcessEnv {
  return testEnv(
    { url: redisUrl },
    { url: databaseUrl, poolSize: 10 },
    { DATABASE_MIGRATE_ON_START: 'true', DATA_DIR: dataDir, LOG_LEVEL: 'warn', HTTP_ACCESS_LOG: 'false', REDIS_REPLICA_ACKS: acks },
  );
}

const show = (r: LoadResult) =>
  `${fmt(rate(r)).padStart(6)} req/s  p50 ${ms(r.p50).padStart(9)}  p99 ${ms(r.p99).padStart(9)}${r.errors ? `  (${r.errors} errors)` : ''}`;

async function httpBench(apis: { url: string; pid: number }[], redisUrl: string, pinning: Pinning | undefined): Promise<void> {
  const keys = createKeys('wp');
  const redis = new Redis(redisUrl);
  const fill = async (group: number) => {
    const key = keys.pool('titles', group);
    await redis.del(key, keys.poolConsumed('titles', group));
    for (let i = 0; i < POOL_FILL; i += 5000) {
      await redis.lpush(
        key,
        ...Array.from({ length: 5000 }, (_, k) => encodeItem({ id: group * 10_000_000 + i + k, text: 'A pooled title of about fifty bytes' })),
      );
    }
  };
  const tokens = await Promise.all(apis.map((a) => adminToken(a.url)));
  const body = JSON.stringify({ role: 'user', content: CONTENT });
  const targets = (op: 'append' | 'pop'): Target[] =>
    MODES.map((mode, i) => ({
      name: mode.name,
      url: apis[i]!.url,
      pid: apis[i]!.pid,
      headers: { authorization: `Bearer ${tokens[i]}` },
      okStatus: op === 'append' ? 201 : 200,
      call: (client: number) =>
        op === 'append'
          ? { path: `/api/sessions/bench-${i}-${client}/messages`, method: 'POST', body }
          : { path: `/api/pools/titles/${mode.group}/pop`, method: 'POST' },
    }));
  console.log(
    `HTTP: each server warmed up ${PREWARM_MS} ms, then ${RUN_MS} ms per run after ${WARMUP_MS} ms warm-up, median of ${ROUNDS} interleaved rounds; ` +
      (pinning ? `servers on CPU ${pinning.servers}, load generator and both redis-servers on CPU ${pinning.load}` : 'not pinned to CPUs'),
  );
  for (const mode of MODES) await fill(mode.group);
  for (const target of [...targets('append'), ...targets('pop')]) await load(target, 32, PREWARM_MS);
  for (const op of ['append', 'pop'] as const) {
    for (const clients of CLIENTS) {
      const rounds = new Map<string, LoadResult[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of targets(op)) {
          if (op === 'pop') await fill(MODES.find((m) => m.name === target.name)!.group);
          await load(target, clients, WARMUP_MS);
          rounds.set(target.name, [...(rounds.get(target.name) ?? []), await load(target, clients, RUN_MS)]);
        }
      }
      const [off, on] = MODES.map((m) => medianBy(rounds.get(m.name)!, rate));
      const label = op === 'append' ? 'message append' : 'pool pop';
      console.log(`${label.padEnd(15)} ${String(clients).padStart(2)} client(s)  ${MODES[0].name.padEnd(21)} ${show(off!)}`);
      console.log(
        `${''.padEnd(28)} ${MODES[1].name.padEnd(21)} ${show(on!)}   ${(rate(on!) / rate(off!)).toFixed(2)}x req/s, p50 ${(on!.p50 / off!.p50).toFixed(2)}x, p99 ${(on!.p99 / off!.p99).toFixed(2)}x`,
      );
    }
  }
  redis.disconnect();
}

/** Crawl jobs added through the registry (the add of a chain's next link), `concurrency` at a time, for RUN_MS. */
async function addJobs(registry: QueueRegistry, concurrency: number, firstIp: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + RUN_MS;
  let ip = firstIp;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const ipId = ip++;
        const taskId = newTaskId(ipId);
        const t0 = performance.now();
        await registry.add('crawl', 'crawl', { ipId, keyword: 'bench', taskId, pagesOnSale: 1, pagesSold: 1 }, { jobId: taskId, delay: 3_600_000 }, ipId);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / ((performance.now() - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function jobAddBench(redisUrl: string, databaseUrl: string, dataDir: string): Promise<void> {
  const registries = MODES.map((mode) => {
    const config = loadConfig(env(redisUrl, databaseUrl, dataDir, mode.acks));
    const connections = new RedisConnections({ kind: 'single', url: redisUrl }, connectionOptions(config), silentLogger(), replicaAckSettings(config));
    return { connections, registry: new QueueRegistry({ config, connections, keys: createKeys(`bench${mode.acks}`) }) };
  });
  let ip = 1;
  for (const { registry } of registries) await addJobs(registry, 32, (ip += 1_000_000));
  console.log(`Chain job adds (crawl jobs through the queue registry, in this process), median of ${ROUNDS} interleaved rounds of ${RUN_MS} ms`);
  for (const concurrency of [1, 32]) {
    const rounds: { perSecond: number; p50: number; p99: number }[][] = MODES.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { registry }] of registries.entries()) rounds[i]!.push(await addJobs(registry, concurrency, (ip += 1_000_000)));
    }
    const [off, on] = rounds.map((r) => medianBy(r, (x) => x.perSecond));
    const line = (r: { perSecond: number; p50: number; p99: number }) =>
      `${fmt(r.perSecond).padStart(6)} adds/s  p50 ${ms(r.p50).padStart(9)}  p99 ${ms(r.p99).padStart(9)}`;
    console.log(`job add        ${String(concurrency).padStart(2)} at a time   ${MODES[0].name.padEnd(21)} ${line(off!)}`);
    console.log(
      `${''.padEnd(28)} ${MODES[1].name.padEnd(21)} ${line(on!)}   ${(on!.perSecond / off!.perSecond).toFixed(2)}x adds/s, p50 ${(on!.p50 / off!.p50).toFixed(2)}x, p99 ${(on!.p99 / off!.p99).toFixed(2)}x`,
    );
  }
  for (const { registry, connections } of registries) {
    await registry.close();
    await connections.close();
  }
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-failover-'));
  const master = await startRedisServer({ dir: path.join(tmp, 'master') });
  const replica = await startRedisServer({
    dir: path.join(tmp, 'replica'),
    extraArgs: ['--replicaof', '127.0.0.1', String(master.port), '--repl-diskless-sync-delay', '0'],
  });
  let pg: Awaited<ReturnType<typeof startPostgresCluster>> | undefined;
  const children: PlatformProcess[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const child of children) await child.stop(10_000).catch(() => undefined);
      await replica.stop();
      await master.stop();
      await pg?.stop();
      rmSync(tmp, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    pg = await startPostgresCluster();
    const pinning = pinLoadToCpu0();
    pinToLoadCpu(pinning, master.pid);
    pinToLoadCpu(pinning, replica.pid);
    const databaseUrl = await createBenchDatabase(pg.url, 'bench');
    const probe = new Redis(master.url);
    while (!/state=online/.test(await probe.info('replication'))) await new Promise((r) => setTimeout(r, 50));
    probe.disconnect();
    console.log(
      `failover benchmark (the cost of REDIS_REPLICA_ACKS), ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}; master + 1 replica on loopback`,
    );
    const apis: { url: string; pid: number }[] = [];
    for (const mode of MODES) {
      // The first api process migrates the database; the second finds it migrated.
      const api = await spawnServer(
        pinning,
        ['workers/run-role.ts', 'api'],
        env(master.url, databaseUrl, path.join(tmp, `data-${mode.acks}`), mode.acks),
        /API\s+(http:\/\/\S+)\/api/,
      );
      children.push(api.server);
      apis.push({ url: api.match[1]!, pid: api.server.pid });
    }
    await httpBench(apis, master.url, pinning);
    for (const child of children.splice(0)) await child.stop(10_000);
    unpinLoad(pinning);
    await jobAddBench(master.url, databaseUrl, path.join(tmp, 'data-jobs'));
    console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    await cleanup();
  }
}

await main();
