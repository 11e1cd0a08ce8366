/**
 * Benchmark of the session message cache (`npm run bench:messages`).
 *
 * HTTP, against baselines measured in the same run: a bare express route doing the same Redis
 * work (the RPUSH + EXPIRE + LTRIM MULTI for an append, the LRANGE for a read) with no auth, no
 * validation, no persist job and no fallback; and the same bare route behind the platform's auth
 * middleware with its separate blacklist lookup (a second round trip: what the message routes
 * cost before they checked the blacklist inside their own script), to show what authentication
 * alone costs. Appends/s and reads/s with p50/p99 and the server process's CPU per request at 1
 * and 64 clients, each client on its own session. The platform's api role runs in one child
 * process, the two baselines in another, the load generator here, with bench/http-load.ts'
 * method: servers pinned away from the load and Redis, each warmed up first, interleaved rounds,
 * the median round (BENCH_ROUNDS, default 5).
 *
 * Persist: rows/s the messages role writes to PostgreSQL draining the persist buffers, for a backlog
 * of 100,000 messages and for a stream accepted by 64 callers through the API's write path while
 * the worker runs, against a bare set-based INSERT of the same rows (500 a statement, one lane per
 * buffer) as the ceiling.
 *
 * Starts its own redis-server and PostgreSQL cluster (fsync off) and removes them afterwards.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { Redis } from 'ioredis';
import type { Counter } from 'prom-client';
import { wireAuth } from '../src/auth/wiring.js';
import { loadConfig } from '../src/config/index.js';
import { authenticator } from '../src/http/authenticate.js';
import { requireAuth } from '../src/http/express-mount.js';
import { newMessageId } from '../src/messages/message-id.js';
import { MessageConnections } from '../src/messages/message-connections.js';
import { MessageStore } from '../src/messages/message-store.js';
import { PersistBuffer } from '../src/messages/persist-buffer.js';
import { PersistWriter } from '../src/messages/persist-writer.js';
import { startMessagesRole } from '../src/messages/role.js';
import type { AcceptedMessage } from '../src/queues/payloads/messages.js';
import { startPlatform } from '../src/runtime/start-platform.js';
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
  PREWARM_MS,
  rate,
  spawnServer,
  unpinLoad,
  type LoadResult,
  type Pinning,
  type Target,
} from './http-load.js';
import { medianBy } from './stats.js';

const RUN_MS = 3000;
const WARMUP_MS = 800;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CLIENTS = [1, 64];
const CONTENT = 'A benchmark message of about one hundred bytes, like a short chat turn between a user and a model.';

function platformEnv(redisUrl: string, databaseUrl: string, dataDir: string): NodeJS.ProcessEnv {
  return testEnv(
    { url: redisUrl },
    { url: databaseUrl, poolSize: 10 },
    {
      DATABASE_MIGRATE_ON_START: 'true',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      HTTP_ACCESS_LOG: 'false',
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Server mode (child process): the platform's api role and the baseline app.

/**
 * The baseline: the same Redis work as the message routes, nothing else. With `guard`, the same
 * routes behind the platform's auth middleware (token check + a separate blacklist lookup), which
 * shows what authentication costs when it takes its own round trip.
 */
function baselineApp(redis: Redis, keyOf: (session: string) => string, maxLen: number, ttl: number, guard?: express.RequestHandler): express.Express {
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  if (guard) app.use(guard);
  let seq = Date.now() * 1000;
  app.post('/baseline/sessions/:sessionId/messages', async (req, res) => {
    const key = keyOf(req.params.sessionId);
    const entry = JSON.stringify({ id: randomUUID(), seq: ++seq, role: req.body.role, content: req.body.content, createdAt: new Date().toISOString() });
    await redis.multi().rpush(key, entry).expire(key, ttl).ltrim(key, -maxLen, -1).exec();
    res.status(201).type('application/json').send(entry);
  });
  app.get('/baseline/sessions/:sessionId/messages', async (req, res) => {
    const limit = Number(req.query.limit ?? 50);
    const entries = await redis.lrange(keyOf(req.params.sessionId), -limit, -1);
    res
      .status(200)
      .type('application/json')
      .send(`{"messages":[${entries.join(',')}],"source":"cache"}`);
  });
  return app;
}

async function listenLocal(app: express.Express): Promise<http.Server> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The two baselines (this is a child process): prints their URLs as a JSON line. */
async function serve(): Promise<void> {
  const config = loadConfig(process.env);
  // No roles: the platform's context only, for the auth middleware of the second baseline.
  const platform = await startPlatform({ roles: [], config });
  const { ctx } = platform;
  const redis = new Redis(process.env.REDIS_URL!);
  const { auth } = wireAuth(ctx);
  const keyOf = (s: string) => `bench:chat:session:{${s}}:messages`;
  const { cacheMaxLen, cacheTtlSeconds } = config.messages;
  const bare = await listenLocal(baselineApp(redis, keyOf, cacheMaxLen, cacheTtlSeconds));
  const authed = await listenLocal(baselineApp(redis, keyOf, cacheMaxLen, cacheTtlSeconds, requireAuth(authenticator(auth))));
  const url = (server: http.Server) => `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  console.log(JSON.stringify({ baseline: url(bare), baselineAuth: url(authed) }));
  process.once('SIGTERM', async () => {
    for (const server of [bare, authed]) {
      server.close();
      server.closeAllConnections();
    }
    redis.disconnect();
    await platform.stop();
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP: appends and reads.

interface Servers {
  api: { url: string; pid: number };
  baselines: { baseline: string; baselineAuth: string; pid: number };
}

async function httpBench(servers: Servers, pinning: Pinning | undefined): Promise<void> {
  const token = await adminToken(servers.api.url);
  const auth = { authorization: `Bearer ${token}` };
  const body = JSON.stringify({ role: 'user', content: CONTENT });
  const servedBy = [
    { name: 'baseline', url: servers.baselines.baseline, sessions: '/baseline/sessions', pid: servers.baselines.pid, headers: {} },
    { name: 'baseline+auth', url: servers.baselines.baselineAuth, sessions: '/baseline/sessions', pid: servers.baselines.pid, headers: auth },
    { name: 'platform', url: servers.api.url, sessions: '/api/sessions', pid: servers.api.pid, headers: auth },
  ];
  // Each client appends to and reads its own session (reads of 50 from the cache).
  const targets = (op: 'append' | 'read'): Target[] =>
    servedBy.map((t) => ({
      name: t.name,
      url: t.url,
      pid: t.pid,
      headers: t.headers,
      okStatus: op === 'append' ? 201 : 200,
      call: (client: number) =>
        op === 'append'
          ? { path: `${t.sessions}/bench-${client}/messages`, method: 'POST', body }
          : { path: `${t.sessions}/bench-${client}/messages?limit=50`, method: 'GET' },
    }));
  console.log(
    `HTTP: each server warmed up ${PREWARM_MS} ms, then ${RUN_MS} ms per run after ${WARMUP_MS} ms warm-up, median of ${ROUNDS} interleaved rounds; ` +
      `content ${CONTENT.length} bytes; reads of 50 from the cache; ` +
      (pinning ? `servers on CPU ${pinning.servers}, load generator and Redis on CPU ${pinning.load}` : 'not pinned to CPUs'),
  );
  for (const target of targets('append')) await load(target, 64, PREWARM_MS);
  const show = (r: LoadResult) =>
    `${fmt(rate(r)).padStart(6)} req/s  p50 ${ms(r.p50).padStart(9)}  p99 ${ms(r.p99).padStart(9)}  cpu ${r.cpuUs.toFixed(0).padStart(4)} µs/req${r.errors ? `  (${r.errors} errors)` : ''}`;
  for (const op of ['append', 'read'] as const) {
    for (const clients of CLIENTS) {
      const rounds = new Map<string, LoadResult[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of targets(op)) {
          await load(target, clients, WARMUP_MS);
          rounds.set(target.name, [...(rounds.get(target.name) ?? []), await load(target, clients, RUN_MS)]);
        }
      }
      const [b, ...rest] = servedBy.map((t) => medianBy(rounds.get(t.name)!, rate));
      console.log(`${op.padEnd(6)} ${String(clients).padStart(2)} client(s)  ${servedBy[0]!.name.padEnd(13)} ${show(b!)}`);
      rest.forEach((r, i) =>
        console.log(
          `${''.padEnd(20)} ${servedBy[i + 1]!.name.padEnd(13)} ${show(r)}   ${(rate(r) / rate(b!)).toFixed(2)}x req/s, ${(b!.cpuUs / r.cpuUs).toFixed(2)}x by cpu`,
        ),
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Persist throughput (in this process).

const BARE_INSERT = `
INSERT INTO chat_messages (message_id, session_id, seq, role, content, accepted_at)
SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::bigint[], $4::text[]::message_role[], $5::text[], $6::timestamptz[])
ON CONFLICT (message_id) DO NOTHING`;

async function persistBench(redisUrl: string, databaseUrl: string, dataDir: string): Promise<void> {
  const config = loadConfig({ ...platformEnv(redisUrl, databaseUrl, dataDir), DATABASE_MIGRATE_ON_START: 'false' });
  const platform = await startPlatform({ roles: [], config });
  const { ctx } = platform;
  const s = config.messages;
  const store = new MessageStore(ctx.db);
  const buffer = new PersistBuffer(ctx.keys, s);
  const reset = async () => {
    await ctx.queues.queue('messagePersist').drain(true);
    for (let shard = 0; shard < s.persistShards; shard++) await ctx.redis.del(ctx.keys.messagePersistBuffer(shard), ctx.keys.messagePersistLock(shard));
    await ctx.db.pool.query('TRUNCATE chat_messages');
  };
  const countRows = async () => Number((await ctx.db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM chat_messages')).rows[0]!.n);
  // The worker's own count of new rows, read in-process (polling count(*) would load the DB being measured).
  const persisted = async () => {
    const counter = ctx.metrics.registry.getSingleMetric('wp_messages_persisted_total') as Counter | undefined;
    return counter ? ((await counter.get()).values[0]?.value ?? 0) : 0;
  };
  const message = (i: number): AcceptedMessage => ({
    messageId: newMessageId(),
    sessionId: `persist-${i % 1000}`,
    seq: Date.now() * 1000 + i,
    role: 'user',
    content: CONTENT,
    acceptedAt: new Date().toISOString(),
  });
  const untilPersisted = async (start: number, total: number) => {
    while ((await persisted()) - start < total) await sleep(5);
  };
  const checkRows = async (total: number) => {
    if ((await countRows()) !== total) throw new Error(`expected ${total} rows, found ${await countRows()}`);
  };
  const total = 100_000;

  // 1. A backlog: 100,000 accepted messages waiting in the buffers (as after an outage of the worker).
  await reset();
  for (let i = 0; i < total; i += 5000) {
    const pipeline = ctx.redis.pipeline();
    for (let j = i; j < i + 5000; j++) {
      const m = message(j);
      pipeline.rpush(ctx.keys.messagePersistBuffer(buffer.shardOf(m.sessionId)), JSON.stringify(m));
    }
    await pipeline.exec();
  }
  let start = await persisted();
  let t0 = performance.now();
  let role = await startMessagesRole(ctx);
  await ctx.queues.add('messagePersist', 'drain', {}, { removeOnComplete: true });
  await untilPersisted(start, total);
  const backlog = total / ((performance.now() - t0) / 1000);
  await role.stop();
  await checkRows(total);

  // 2. A stream: 64 callers accepting messages through the API's write path (buffer push and
  //    drain triggers, no HTTP and no cache) while the worker runs; until the last one is stored.
  await reset();
  const writer = new PersistWriter({
    connections: new MessageConnections([ctx.redis], s.redisConnectTimeoutMs),
    buffer,
    queues: ctx.queues,
    store,
    logger: ctx.logger,
    settings: s,
    accepted: ctx.metrics.counter('bench_accepted_total', 'accepted', ['path']),
  });
  const streamed = 50_000;
  role = await startMessagesRole(ctx);
  start = await persisted();
  t0 = performance.now();
  let issued = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (issued < streamed) await writer.persist(message(issued++));
    }),
  );
  const acceptSeconds = (performance.now() - t0) / 1000;
  await untilPersisted(start, streamed);
  const stream = streamed / ((performance.now() - t0) / 1000);
  await role.stop();
  await checkRows(streamed);

  // 3. The ceiling: the same rows inserted directly from arrays, 500 a statement, one lane per buffer.
  await reset();
  const rows = Array.from({ length: total }, (_, i) => message(i));
  const batches = Array.from({ length: total / 500 }, (_, i) => rows.slice(i * 500, (i + 1) * 500));
  const c0 = performance.now();
  await Promise.all(
    Array.from({ length: s.persistShards }, async (_, lane) => {
      for (let i = lane; i < batches.length; i += s.persistShards) {
        const b = batches[i]!;
        await ctx.db.pool.query(BARE_INSERT, [
          b.map((m) => m.messageId),
          b.map((m) => m.sessionId),
          b.map((m) => String(m.seq)),
          b.map((m) => m.role),
          b.map((m) => m.content),
          b.map((m) => m.acceptedAt),
        ]);
      }
    }),
  );
  const ceiling = total / ((performance.now() - c0) / 1000);
  console.log(`baseline: bare INSERT ... unnest, 500 rows, ${s.persistShards} at a time ${ceiling.toFixed(0).padStart(7)} rows/s`);
  console.log(`worker: backlog of ${total} in the buffers              ${backlog.toFixed(0).padStart(7)} rows/s   ${(backlog / ceiling).toFixed(2)}x`);
  console.log(
    `worker: stream from 64 callers, accepted to stored      ${stream.toFixed(0).padStart(7)} rows/s   ${(stream / ceiling).toFixed(2)}x   (accepted at ${(streamed / acceptSeconds).toFixed(0)}/s)`,
  );
  await reset();
  await platform.stop();
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-messages-'));
  const redis = await startRedisServer({ dir: path.join(tmp, 'redis') });
  let pg: Awaited<ReturnType<typeof startPostgresCluster>> | undefined;
  const children: PlatformProcess[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const child of children) await child.stop(10_000).catch(() => undefined);
      await redis.stop();
      await pg?.stop();
      rmSync(tmp, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    // PostgreSQL first: started after the pinning, it would inherit the load's one CPU.
    pg = await startPostgresCluster();
    const pinning = pinLoadToCpu0();
    pinToLoadCpu(pinning, redis.pid);
    const databaseUrl = await createBenchDatabase(pg.url, 'bench');
    const env = platformEnv(redis.url, databaseUrl, path.join(tmp, 'data'));

    console.log(
      `messages benchmark, ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    // The api role migrates the database; the baselines start once it has.
    const api = await spawnServer(pinning, ['workers/run-role.ts', 'api'], env, /API\s+(http:\/\/\S+)\/api/);
    children.push(api.server);
    const baselines = await spawnServer(pinning, ['bench/messages.ts', 'serve'], { ...env, DATABASE_MIGRATE_ON_START: 'false' }, /^(\{"baseline".*\})$/m);
    children.push(baselines.server);
    await httpBench(
      {
        api: { url: api.match[1]!, pid: api.server.pid },
        baselines: { ...(JSON.parse(baselines.match[1]!) as { baseline: string; baselineAuth: string }), pid: baselines.server.pid },
      },
      pinning,
    );
    for (const child of children.splice(0)) await child.stop(10_000);
    unpinLoad(pinning);

    console.log('Persist to PostgreSQL 15 (fsync off): MESSAGE_PERSIST_BATCH 500, MESSAGE_PERSIST_SHARDS 4');
    await persistBench(redis.url, databaseUrl, path.join(tmp, 'data'));
    console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    await cleanup();
  }
}

if (process.argv[2] === 'serve') await serve();
else await main();
