/**
 * Benchmark of the content pools (`npm run bench:pools`).
 *
 * HTTP pops, every server in its own child process, the load generator here (node:http with a
 * keep-alive agent, one connection per client), at 1 and 64 concurrent clients:
 *   - platform: POST /api/pools/titles/1/pop of the api role (auth with token check, validation,
 *     the pop script that checks the credential and records the consumed id, its deadline,
 *     metrics, the marking trigger), access log off (HTTP_ACCESS_LOG=false), run as the production
 *     image runs it: `node dist/workers/run-role.js api`, built here first (`npm run build`);
 *   - platform, tsx: the same run as `npm start` and `npm run start:role` run it, through tsx's
 *     on-the-fly transform (which wraps every closure made in a naming helper);
 *   - platform, access log: the same with the default settings (HTTP_ACCESS_LOG=true, LOG_LEVEL=info),
 *     its log lines read and dropped here as a log collector would read them;
 *   - express:  a bare express app whose one route does only RPOP (the baseline of the first target);
 *     the bare servers are plain JavaScript on plain node (bench/bare-pop-server.mjs), as the build is;
 *   - node:http: a bare node:http server doing only RPOP (the ceiling of this machine; the aim is 0.9x it);
 *   - node:http, log line: the same writing one line per request to stdout as pino does (an
 *     asynchronous write), the like of the platform with its access log: on this VM a thread that
 *     writes now and then keeps the server's CPU from halting between requests, which alone makes a
 *     server much faster in this closed loop (docs/benchmarks.md), so each platform row is compared
 *     with the bare row that has or lacks the same.
 * Printed per server: pops/s, latency, and the CPU time per pop of the server, of the load generator
 * and of Redis (the last two share CPU 0); per clients level, how busy each core was and the
 * commands Redis ran per pop for the platform and the bare node:http route (INFO commandstats).
 * The method is bench/http-load.ts': servers pinned away from the load generator and Redis, each
 * warmed up first, interleaved rounds, the median round (by rate). Then pop-many with count 100
 * (items/s). The lists are topped up with synthetic items between runs (the HTTP path
 * does not care where an item came from); refill and marking are measured on their own:
 *   - refill rows/s: refillPool (reserve in batches of 500 + fenced LPUSH) from PostgreSQL, against
 *     the reference design's SELECT + LPUSH with no reservation;
 *   - consumed-marking rows/s: markConsumed (batches of POOL_CONSUMED_BATCH ids per UPDATE), against
 *     the reference design's one UPDATE per row.
 *
 * Starts its own redis-server and PostgreSQL cluster and removes them afterwards.
 * BENCH_ROUNDS (default 5) sets the rounds; BENCH_PART=http|db runs one half (the HTTP half
 * includes Redis's side of a pop, see redisSideBench; BENCH_PART=redis runs that alone);
 * BENCH_PROFILE_DIR writes CPU profiles of the servers (api/, api-logging/, express/, http/,
 * http-log/ under it); BENCH_SERVER_FLAGS gives node flags to every server alike (V8's heap
 * settings, say: docs/benchmarks.md, "Where the gap goes").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis, type ChainableCommander } from 'ioredis';
import pg from 'pg';
import { applyMigrations } from '../src/db/migrate.js';
import { silentLogger } from '../src/logging/logger.js';
import { aofGuardLua, isAofBusyReply } from '../src/pools/aof-guard.js';
import { markConsumed } from '../src/pools/mark-consumed.js';
import { decodeItem, encodeItem } from '../src/pools/pool-item.js';
import { decodePopReply, PoolLists } from '../src/pools/pool-lists.js';
import { PoolRows } from '../src/pools/pool-rows.js';
import { popOneScript } from '../src/pools/pool-scripts.js';
import { refillPool } from '../src/pools/refill-pool.js';
import { createKeys } from '../src/redis/keys.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { testEnv } from '../test/support/env.js';
import type { PlatformProcess } from '../test/support/processes.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import {
  adminToken,
  BARE_POP_KEY,
  createBenchDatabase,
  fmt,
  load,
  ms,
  pinLoadToCpu0,
  pinToLoadCpu,
  PREWARM_MS,
  processCpuUs,
  ROOT,
  serverFlags,
  rate,
  spawnServer,
  unpinLoad,
  type LoadResult,
  type Pinning,
  type Target,
} from './http-load.js';
import { median, medianBy } from './stats.js';

const RUN_MS = 4000;
const WARMUP_MS = 800;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CLIENTS = [1, 64];
const TEXT = 'A pooled title of about fifty bytes, ready to serve';
const PLATFORM = 'platform pop (auth)';
const PLATFORM_LOG = 'platform, access log';
const PLATFORM_TSX = 'platform pop, tsx';
const EXPRESS = 'bare express RPOP';
const HTTP = 'bare node:http RPOP';
const HTTP_LOG = 'bare node:http, log line';
const us = (n: number) => `${n.toFixed(0)} µs`;
const x = (n: number) => `${n.toFixed(2)}x`;

/** CPUs of the servers and of the load (set by main() only: a server child keeps its CPU). */
let PINNING: Pinning | undefined;

async function topUp(redis: Redis, key: string, want: number, nextId: { value: number }): Promise<void> {
  let length = await redis.llen(key);
  while (length < want) {
    const n = Math.min(20_000, want - length);
    const items = Array.from({ length: n }, () => encodeItem({ id: nextId.value++, text: TEXT }));
    length = await redis.lpush(key, ...items);
  }
}

interface Env {
  redis: Redis;
  pool: pg.Pool;
  apiUrl: string;
  token: string;
  expressUrl: string;
  httpUrl: string;
  /** The bare node:http server writing a log line per request. */
  loggingHttpUrl: string;
  /** The api role with the default logging (access log on). */
  loggingApiUrl: string;
  /** The api role run through tsx, as `npm start` runs it. */
  tsxApiUrl: string;
  pids: { api: number; loggingApi: number; tsxApi: number; express: number; http: number; loggingHttp: number; redis: number };
}

/** Redis's per-command counters (INFO commandstats): calls and µs spent, by command. */
type CommandStats = Map<string, { calls: number; usec: number }>;

async function commandStats(redis: Redis): Promise<CommandStats> {
  const stats: CommandStats = new Map();
  for (const line of String(await redis.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) stats.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return stats;
}

/** What a run added to the counters, per request; commands under 0.01 a request are left out (the bench's own, BullMQ's). */
function commandsPerRequest(before: CommandStats, after: CommandStats, requests: number): CommandStats {
  const per: CommandStats = new Map();
  for (const [name, { calls, usec }] of after) {
    const was = before.get(name) ?? { calls: 0, usec: 0 };
    const perCall = (calls - was.calls) / requests;
    if (perCall >= 0.01) per.set(name, { calls: perCall, usec: (usec - was.usec) / requests });
  }
  return per;
}

async function httpBench(env: Env): Promise<void> {
  const { redis } = env;
  const auth = { authorization: `Bearer ${env.token}` };
  const keys = createKeys('wp');
  const poolKey = keys.pool('titles', 1);
  const nextId = { value: 1_000_000_000 };
  const pop = (path: string) => () => ({ path, method: 'POST' });
  const redisPid = env.pids.redis;
  const platformPop = { call: pop('/api/pools/titles/1/pop'), okStatus: 200, redisPid, headers: auth, key: poolKey };
  const barePop = { call: pop('/pop'), okStatus: 200, redisPid, headers: {}, key: BARE_POP_KEY };
  const targets: (Target & { key: string })[] = [
    { name: PLATFORM, url: env.apiUrl, pid: env.pids.api, ...platformPop },
    { name: PLATFORM_LOG, url: env.loggingApiUrl, pid: env.pids.loggingApi, ...platformPop },
    { name: PLATFORM_TSX, url: env.tsxApiUrl, pid: env.pids.tsxApi, ...platformPop },
    { name: EXPRESS, url: env.expressUrl, pid: env.pids.express, ...barePop },
    { name: HTTP, url: env.httpUrl, pid: env.pids.http, ...barePop },
    { name: HTTP_LOG, url: env.loggingHttpUrl, pid: env.pids.loggingHttp, ...barePop },
  ];
  console.log(
    `HTTP: each server warmed up ${PREWARM_MS} ms, then ${RUN_MS} ms per run after ${WARMUP_MS} ms warm-up, median of ${ROUNDS} interleaved rounds (each starting with the next server); ` +
      (PINNING ? `servers on CPU ${PINNING.servers}, load generator and Redis on CPU ${PINNING.load}\n` : 'not pinned to CPUs\n'),
  );
  for (const target of targets) {
    await topUp(redis, target.key, 400_000, nextId);
    await load(target, 64, PREWARM_MS);
    await redis.del(keys.poolConsumed('titles', 1));
  }
  const rounds = new Map<string, LoadResult[]>();
  /** Redis's commands per pop in each run (INFO commandstats around it). */
  const commandsOf = new Map<LoadResult, CommandStats>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const clients of CLIENTS) {
      // Each round starts with another server: none is always the one that runs right after the
      // previous round (its Redis still writing the top-up to its AOF, say).
      for (const target of targets.map((_, i) => targets[(i + round) % targets.length]!)) {
        await topUp(redis, target.key, 400_000, nextId);
        await load(target, clients, WARMUP_MS);
        const before = await commandStats(redis);
        const r = await load(target, clients, RUN_MS);
        const id = `${target.name}@${clients}`;
        rounds.set(id, [...(rounds.get(id) ?? []), r]);
        commandsOf.set(r, commandsPerRequest(before, await commandStats(redis), r.requests));
        await redis.del(keys.poolConsumed('titles', 1));
      }
    }
  }
  const medians = new Map([...rounds].map(([id, rs]) => [id, medianBy(rs, rate)]));
  console.log('pops over HTTP              clients   pops/s      p50        p99   errors   CPU per pop: server    load   Redis');
  for (const clients of CLIENTS) {
    for (const target of targets) {
      const r = medians.get(`${target.name}@${clients}`)!;
      console.log(
        `${target.name.padEnd(26)} ${String(clients).padStart(7)} ${fmt(rate(r)).padStart(9)} ${ms(r.p50).padStart(10)} ${ms(r.p99).padStart(10)} ${String(r.errors).padStart(6)} ` +
          `${us(r.cpuUs).padStart(20)} ${us(r.loadCpuUs).padStart(7)} ${us(r.redisCpuUs).padStart(7)}`,
      );
    }
  }
  console.log('');
  for (const clients of CLIENTS) {
    const at = (name: string) => medians.get(`${name}@${clients}`)!;
    const [p, pl, pt, e, h, hl] = [at(PLATFORM), at(PLATFORM_LOG), at(PLATFORM_TSX), at(EXPRESS), at(HTTP), at(HTTP_LOG)] as const;
    const ratio = (a: LoadResult, b: LoadResult) => rate(a) / rate(b);
    const aim = clients === 64 ? ` (aim >= 0.9x: ${ratio(p, h) >= 0.9 ? 'met' : 'NOT met'})` : '';
    console.log(
      `${clients} client(s): platform/node:http ${x(ratio(p, h))}${aim}; with the access log/node:http with a log line ${x(ratio(pl, hl))}; ` +
        `platform/express ${x(ratio(p, e))} (target >= 0.8x: ${ratio(p, e) >= 0.8 ? 'met' : 'NOT met'}); ` +
        `server CPU per pop node:http/platform ${x(h.cpuUs / p.cpuUs)}; CPU 0 (load generator + Redis) per pop node:http/platform ${x((h.loadCpuUs + h.redisCpuUs) / (p.loadCpuUs + p.redisCpuUs))}; ` +
        `run through tsx (npm start)/node:http ${x(ratio(pt, h))}, tsx/build ${x(ratio(pt, p))}`,
    );
    if (PINNING) {
      // Which core limits: with the load generator and Redis on one core, that core can fill up
      // before the server's does; then pops/s measure it, not the server.
      const busy = (r: LoadResult) => [(rate(r) * (r.loadCpuUs + r.redisCpuUs)) / 1e6, (rate(r) * r.cpuUs) / 1e6] as const;
      const pct = (f: number) => `${Math.round(f * 100)}%`;
      const [p0, p1] = busy(p);
      const [h0, h1] = busy(h);
      const full = Math.max(p0, h0) >= 0.9;
      console.log(
        `  cores busy: platform CPU ${PINNING.load} (load generator + Redis) ${pct(p0)}, CPU ${PINNING.servers} (server) ${pct(p1)}; bare node:http ${pct(h0)}, ${pct(h1)}` +
          (full ? ` (CPU ${PINNING.load} near full: the pops/s ratio follows its CPU per pop more than the servers')` : ''),
      );
    }
    // What Redis runs for each pop, in the median round: a script's µs include the commands it called.
    const commands = (r: LoadResult) =>
      [...commandsOf.get(r)!]
        .sort(([, a], [, b]) => b.usec - a.usec)
        .map(([name, c]) => `${name} ${c.calls.toFixed(2)} (${c.usec.toFixed(1)} µs)`)
        .join(', ');
    console.log(
      `  Redis commands a pop (INFO commandstats, calls and µs; a script's include its commands'): platform ${commands(p)}; bare node:http ${commands(h)}`,
    );
  }

  // pop-many, count 100
  const manyBody = JSON.stringify({ count: 100 });
  const many: Target = {
    name: 'platform pop-many 100',
    url: env.apiUrl,
    call: () => ({ path: '/api/pools/titles/1/pop-many', method: 'POST', body: manyBody }),
    okStatus: 200,
    items: (body) => (JSON.parse(body.toString()) as { items: unknown[] }).items.length,
    pid: env.pids.api,
    headers: auth,
  };
  const manyClients = 16;
  const manyRounds: LoadResult[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await topUp(redis, poolKey, 1_500_000, nextId);
    await load(many, manyClients, WARMUP_MS);
    manyRounds.push(await load(many, manyClients, RUN_MS));
    await redis.del(keys.poolConsumed('titles', 1));
  }
  const manyMedian = medianBy(manyRounds, (r) => r.items / r.seconds);
  const itemsPerSecond = manyMedian.items / manyMedian.seconds;
  console.log(
    `\npop-many count 100, ${manyClients} clients: ${fmt(itemsPerSecond)} items/s (${fmt(manyMedian.requests / manyMedian.seconds)} requests/s, p50 ${ms(manyMedian.p50)}, p99 ${ms(manyMedian.p99)}, errors ${manyMedian.errors}); ` +
      `${(itemsPerSecond / rate(medians.get('platform pop (auth)@64')!)).toFixed(1)}x single pops at 64 clients; target >= 100,000 items/s: ${itemsPerSecond >= 100_000 ? 'met' : 'NOT met'}`,
  );
  await redis.del(poolKey, BARE_POP_KEY);
}

async function dbBench(env: Env): Promise<void> {
  const { redis, pool } = env;
  const keys = createKeys('wp');
  const rows = new PoolRows(pool);
  const lists = new PoolLists(redis, keys, { commandTimeoutMs: 60_000, connectTimeoutMs: 10_000 });
  const N = 100_000;
  for (const groupId of [10, 11]) {
    for (let i = 0; i < N; i += 10_000) {
      const m = Math.min(10_000, N - i);
      await rows.insert(
        'titles',
        groupId,
        Array.from({ length: m }, (_, k) => ({ text: `${TEXT} ${i + k}`, batchId: (i + k) % 3 })),
      );
    }
  }
  await pool.query('VACUUM ANALYZE titles');

  // Refill of one pool with the platform's batches, against the reference design's SELECT + LPUSH.
  const settings = { size: N, refillThreshold: N, refillBatch: 500, refillLockSeconds: 60 };
  let t = performance.now();
  const outcome = await refillPool({ lists, rows, settings, logger: silentLogger() }, 'titles', 10);
  const refillSeconds = (performance.now() - t) / 1000;
  const pushed = 'pushed' in outcome ? outcome.pushed : 0;
  t = performance.now();
  let referencePushed = 0;
  let after = { batchId: 2 ** 31 - 1, id: '0' };
  for (;;) {
    // Keyset pagination in serving order; no status change, so nothing stops a second refill from queueing the same rows.
    const { rows: batch } = await pool.query<{ id: string; batch_id: number; text: string }>(
      `SELECT id, batch_id, text FROM titles WHERE group_id = 11 AND status = 'available' AND (batch_id < $1 OR (batch_id = $1 AND id > $2))
       ORDER BY batch_id DESC, id ASC LIMIT 500`,
      [after.batchId, after.id],
    );
    if (!batch.length) break;
    await redis.lpush('bench:reference:pool', ...batch.map((r) => encodeItem({ id: Number(r.id), text: r.text })));
    referencePushed += batch.length;
    const last = batch.at(-1)!;
    after = { batchId: last.batch_id, id: last.id };
  }
  const referenceSeconds = (performance.now() - t) / 1000;
  await redis.del('bench:reference:pool');
  const refillRate = pushed / refillSeconds;
  const referenceRate = referencePushed / referenceSeconds;
  console.log(
    `\nrefill (reserve 500/statement + fenced LPUSH): ${fmt(refillRate)} rows/s (${fmt(pushed)} rows in ${refillSeconds.toFixed(2)} s); target >= 20,000 rows/s: ${refillRate >= 20_000 ? 'met' : 'NOT met'}\n` +
      `  reference SELECT + LPUSH, no reservation: ${fmt(referenceRate)} rows/s (${fmt(referencePushed)} rows); platform/reference ${(refillRate / referenceRate).toFixed(2)}x`,
  );

  // Consumed-marking: the pool popped empty (the ids land in the consumed list), then marked.
  while ((await lists.pop('titles', 10, 1000, () => undefined)).items.length) {
    /* drain the pool into the consumed list */
  }
  for (const batch of [1000, 5000]) {
    if (batch !== 1000) {
      await pool.query(`UPDATE titles SET status = 'reserved', consumed_at = NULL WHERE group_id = 10`);
      // The consumed list holds the popped items as they were pooled (the marking job reads their ids).
      const { rows: popped } = await pool.query<{ id: string; text: string }>(`SELECT id, text FROM titles WHERE group_id = 10 ORDER BY id`);
      for (let i = 0; i < popped.length; i += 10_000) {
        await redis.lpush(keys.poolConsumed('titles', 10), ...popped.slice(i, i + 10_000).map((r) => encodeItem({ id: Number(r.id), text: r.text })));
      }
      await pool.query('VACUUM ANALYZE titles');
    }
    t = performance.now();
    let marked = 0;
    for (;;) {
      const r = await markConsumed({ lists, rows, settings: { consumedBatch: batch } }, 'titles', 10);
      marked += r.marked;
      if (!r.more) break;
    }
    const markRate = marked / ((performance.now() - t) / 1000);
    console.log(
      `consumed-marking, ${batch} ids per UPDATE: ${fmt(markRate)} rows/s (${fmt(marked)} rows); target >= 20,000 rows/s: ${markRate >= 20_000 ? 'met' : 'NOT met'}`,
    );
  }
  const { rows: sample } = await pool.query<{ id: string }>(`SELECT id FROM titles WHERE group_id = 11 ORDER BY id LIMIT 5000`);
  t = performance.now();
  for (const r of sample) await pool.query(`UPDATE titles SET status = 'consumed', consumed_at = now() WHERE id = $1`, [r.id]);
  console.log(`  reference, one UPDATE per row: ${fmt(sample.length / ((performance.now() - t) / 1000))} rows/s (${fmt(sample.length)} rows)`);
}

/** The AOF guard as first written: a Lua pattern search of the INFO text (the bench's "before"). */
const PATTERN_AOF_GUARD = `do
  local persistence = redis.pcall('INFO', 'persistence')
  local fsyncs = type(persistence) == 'string' and string.match(persistence, 'aof_pending_bio_fsync:(%d+)')
  if fsyncs and fsyncs ~= '0' then return redis.error_reply('AOFBUSY Redis is still syncing its AOF') end
end`;

/**
 * The pop script's two answers (empty pool, one item popped): now one JSON text, before a RESP
 * array of the items and the length (the bench's "before", built from the script by replacing them).
 */
const POP_REPLY = {
  now: { empty: `return '[' .. redis.call('LLEN', KEYS[1]) .. ']'`, popped: `return '[' .. item .. ',' .. redis.call('LLEN', KEYS[1]) .. ']'` },
  before: { empty: `return {redis.call('LLEN', KEYS[1])}`, popped: `return {item, redis.call('LLEN', KEYS[1])}` },
};

/** The pop script's move: now one LMOVE, before an RPOP and an LPUSH (MULTI, RPOP, LPUSH, EXEC in the AOF). */
const POP_MOVE = {
  now: `local item = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')\nif not item then return '[' .. redis.call('LLEN', KEYS[1]) .. ']' end\n`,
  before: `local item = redis.call('RPOP', KEYS[1])\nif not item then return '[' .. redis.call('LLEN', KEYS[1]) .. ']' end\nredis.call('LPUSH', KEYS[2], item)\n`,
};

/**
 * Redis's side of a pop alone: Redis CPU time per command (its /proc figures) over 200,000 pops
 * sent in pipelines of 200, so that the network reads and writes, which make up most of its CPU
 * per pop over HTTP, are shared by many commands: the pop script (credential check, AOF guard,
 * LMOVE onto the consumed list), the same with the guard as first written (a Lua pattern
 * search), the same without the guard, the same answering a RESP array as it did before its
 * one-JSON-text reply, the same with RPOP and LPUSH as before its LMOVE, and a bare RPOP. Alternating, median of ROUNDS. The client's side too:
 * this process's CPU per pop, each reply decoded as the API decodes it (the pop scripts'
 * with decodePopReply, the array reply as it was, a bare RPOP's item with decodeItem); the
 * pipeline's own cost is in every row alike.
 */
async function redisSideBench(env: Env): Promise<void> {
  const { redis } = env;
  const keys = createKeys('wp');
  const [pool, consumed] = [keys.pool('titles', 2), keys.poolConsumed('titles', 2)];
  const [revoked, state] = ['bench:revoked', 'bench:credential-state'];
  await redis.set(state, 'v1');
  const source = popOneScript.source;
  if (!source.includes(aofGuardLua)) throw new Error('the pop script does not hold the AOF guard the bench replaces');
  if (!source.includes(POP_REPLY.now.empty) || !source.includes(POP_REPLY.now.popped)) throw new Error('the pop script does not answer as the bench expects');
  const arrayReply = source.replace(POP_REPLY.now.empty, POP_REPLY.before.empty).replace(POP_REPLY.now.popped, POP_REPLY.before.popped);
  if (!source.includes(POP_MOVE.now)) throw new Error('the pop script does not move its item as the bench expects');
  const scripts = {
    'pop script (platform)': source,
    'pop script, guard as first written': source.replace(aofGuardLua, PATTERN_AOF_GUARD),
    'pop script without the AOF guard': source.replace(aofGuardLua, ''),
    'pop script, array reply (before)': arrayReply,
    'pop script, RPOP and LPUSH (before)': source.replace(POP_MOVE.now, POP_MOVE.before),
  };
  const decoders: Record<string, (reply: unknown) => unknown> = {
    'pop script, array reply (before)': (reply) => {
      const words = reply as string[];
      return { remaining: Number(words.pop()), items: words.map(decodeItem) };
    },
    'bare RPOP': (reply) => decodeItem(reply as string),
  };
  const POPS = 200_000;
  const PIPELINE = 200;
  const nextId = { value: 2_000_000_000 };
  type Send = (p: ChainableCommander) => void;
  const variants: [string, Send][] = [];
  const clientPerPop = new Map<string, number[]>();
  for (const [name, lua] of Object.entries(scripts)) {
    const sha = String(await redis.script('LOAD', lua));
    variants.push([name, (p) => p.evalsha(sha, 4, pool, consumed, revoked, state, 'v1')]);
  }
  variants.push(['bare RPOP', (p) => p.rpop(pool)]);
  const perPop = new Map<string, number[]>();
  const refused = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, send] of variants) {
      await redis.del(pool, consumed);
      await topUp(redis, pool, POPS, nextId);
      const cpu0 = processCpuUs(env.pids.redis);
      const client0 = process.cpuUsage();
      const decode = decoders[name] ?? ((reply: unknown) => decodePopReply(reply as string));
      // A pop the guard refused (AOFBUSY: an fsync ran) popped nothing and is sent again, as the
      // API sends it: its cost is part of the pops'.
      for (let popped = 0; popped < POPS; ) {
        const p = redis.pipeline();
        for (let i = 0; i < Math.min(PIPELINE, POPS - popped); i++) send(p);
        for (const [err, reply] of (await p.exec()) ?? []) {
          if (!err) {
            decode(reply);
            popped++;
          } else if (isAofBusyReply(err)) refused.set(name, (refused.get(name) ?? 0) + 1);
          else throw err;
        }
      }
      perPop.set(name, [...(perPop.get(name) ?? []), (processCpuUs(env.pids.redis) - cpu0) / POPS]);
      const client = process.cpuUsage(client0);
      clientPerPop.set(name, [...(clientPerPop.get(name) ?? []), (client.user + client.system) / POPS]);
    }
  }
  await redis.del(pool, consumed, state);
  const bare = median(perPop.get('bare RPOP')!);
  const bareClient = median(clientPerPop.get('bare RPOP')!);
  console.log(
    `\nRedis's side of a pop: Redis CPU per pop, and the client's (this process, decoding each reply as the API does), ${fmt(POPS)} pops in pipelines of ${PIPELINE}, median of ${ROUNDS} alternating rounds`,
  );
  for (const [name] of variants) {
    const m = median(perPop.get(name)!);
    const c = median(clientPerPop.get(name)!);
    const busy = refused.get(name) ? `; ${fmt(refused.get(name)!)} refused while an fsync ran, sent again` : '';
    console.log(
      `  ${name.padEnd(36)} Redis ${m.toFixed(2).padStart(6)} µs ${x(m / bare)} a bare RPOP; client ${c.toFixed(2).padStart(6)} µs ${x(c / bareClient)}${busy}`,
    );
  }
}

async function main(): Promise<void> {
  const part = process.env.BENCH_PART ?? 'all';
  // The platform's production build (dist/), which the HTTP part runs as the image does.
  if (part !== 'db') execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-pools-'));
  const redisServer = await startRedisServer({ dir: path.join(tmp, 'redis') });
  // PostgreSQL first: started after the pinning, it would inherit the load's one CPU.
  const cluster = await startPostgresCluster();
  PINNING = pinLoadToCpu0();
  pinToLoadCpu(PINNING, redisServer.pid);
  const children: PlatformProcess[] = [];
  const redis = new Redis(redisServer.url);
  let pool: pg.Pool | undefined;
  try {
    const databaseUrl = await createBenchDatabase(cluster.url, 'bench_pools');
    await applyMigrations(databaseUrl);
    pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });

    const platformEnv = testEnv(
      { url: redisServer.url },
      { url: databaseUrl, poolSize: 10 },
      {
        NODE_ENV: 'production',
        DATA_DIR: path.join(tmp, 'data'),
        LOG_LEVEL: 'warn',
        HTTP_ACCESS_LOG: 'false',
        // No refill requests from the pop path: the bench keeps the lists filled itself.
        POOL_REFILL_THRESHOLD: '0',
      },
    );
    // The defaults: every request logged at info.
    const loggingEnv = { ...platformEnv, DATA_DIR: path.join(tmp, 'data-logging'), LOG_LEVEL: 'info', HTTP_ACCESS_LOG: 'true' };
    const bareEnv = { PATH: process.env.PATH, NODE_ENV: 'production' };
    const built = 'dist/workers/run-role.js';
    const apiReady = /API\s+(http:\/\/\S+)\/api/;
    const bare = (kind: string, log: string[] = []) =>
      spawnServer(
        PINNING,
        ['bench/bare-pop-server.mjs', kind, redisServer.url, BARE_POP_KEY, ...log],
        bareEnv,
        /listening (\d+)/,
        serverFlags([kind, ...log].join('-')),
      );
    const [platform, loggingPlatform, tsxPlatform, bareExpress, bareHttp, loggingBareHttp] = await Promise.all([
      spawnServer(PINNING, [built, 'api'], platformEnv, apiReady, serverFlags('api')),
      spawnServer(PINNING, [built, 'api'], loggingEnv, apiReady, serverFlags('api-logging')),
      spawnServer(PINNING, ['workers/run-role.ts', 'api'], { ...platformEnv, DATA_DIR: path.join(tmp, 'data-tsx') }, apiReady, serverFlags('api-tsx')),
      bare('express'),
      bare('http'),
      bare('http', ['log']),
    ]);
    children.push(platform.server, loggingPlatform.server, tsxPlatform.server, bareExpress.server, bareHttp.server, loggingBareHttp.server);
    // Their log lines are read and dropped (kept, they would grow a string in this process, the load generator's).
    for (const logging of [loggingPlatform, loggingBareHttp]) logging.server.child.stdout!.removeAllListeners('data').resume();
    const apiUrl = platform.match[1]!;
    const token = await adminToken(apiUrl);
    const env: Env = {
      redis,
      pool,
      apiUrl,
      token,
      expressUrl: `http://127.0.0.1:${bareExpress.match[1]}`,
      httpUrl: `http://127.0.0.1:${bareHttp.match[1]}`,
      loggingHttpUrl: `http://127.0.0.1:${loggingBareHttp.match[1]}`,
      loggingApiUrl: loggingPlatform.match[1]!,
      tsxApiUrl: tsxPlatform.match[1]!,
      pids: {
        api: platform.server.pid,
        loggingApi: loggingPlatform.server.pid,
        tsxApi: tsxPlatform.server.pid,
        express: bareExpress.server.pid,
        http: bareHttp.server.pid,
        loggingHttp: loggingBareHttp.server.pid,
        redis: redisServer.pid,
      },
    };

    console.log(
      `pools benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    if (part !== 'db' && part !== 'redis') await httpBench(env);
    if (part !== 'db') await redisSideBench(env);
    if (part !== 'http' && part !== 'redis') {
      // Refill and marking run here, against PostgreSQL: on every CPU, as a worker would.
      for (const c of children.splice(0)) await c.stop(10_000);
      unpinLoad(PINNING);
      await dbBench(env);
    }
  } finally {
    for (const c of children) await c.stop(10_000).catch(() => undefined);
    redis.disconnect();
    await pool?.end().catch(() => undefined);
    await redisServer.stop();
    await cluster.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
