/**
 * Benchmark of the session message cache (`npm run bench:messages`).
 *
 * HTTP, against baselines measured in the same run: a bare express route doing the same Redis
 * work (the RPUSH + EXPIRE + LTRIM MULTI for an append, the LRANGE for a read) with no auth, no
 * validation, no persist job and no fallback; and the same bare route behind the platform's auth
 * middleware with its separate blacklist lookup (a second round trip: what the message routes
 * cost before they checked the blacklist inside their own script), to show what authentication
 * alone costs. Appends/s and reads/s with p50/p99 at 1
 * and 64 clients, each the better of two interleaved runs, with the CPU the server process and
 * redis-server spent per request (steadier than req/s when other work shares the machine). The
 * servers (the platform's api role and the baselines) run in a child process, the load generator
 * here.
 *
 * Persist: rows/s the messages role writes to PostgreSQL draining the persist buffers, for a backlog
 * of 100,000 messages and for a stream accepted by 64 callers through the API's write path while
 * the worker runs, against a bare set-based INSERT of the same rows (500 a statement, one lane per
 * buffer) as the ceiling.
 *
 * Starts its own redis-server and PostgreSQL cluster (fsync off) and removes them afterwards.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { Redis } from 'ioredis';
import pgLib from 'pg';
import type { Counter } from 'prom-client';
import { AuthService } from '../src/auth/auth-service.js';
import { loadConfig } from '../src/config/index.js';
import { requireAuth } from '../src/http/auth-middleware.js';
import { newMessageId } from '../src/messages/message-id.js';
import { MessageConnections } from '../src/messages/message-connections.js';
import { MessageStore } from '../src/messages/message-store.js';
import { PersistBuffer } from '../src/messages/persist-buffer.js';
import { PersistWriter } from '../src/messages/persist-writer.js';
import { startMessagesRole } from '../src/messages/role.js';
import type { AcceptedMessage } from '../src/queues/payloads/messages.js';
import { startPlatform } from '../src/runtime/start-platform.js';
import { startRedisServer } from '../src/services/redis-server-process.js';
import { TEST_ADMIN, testEnv } from '../test/support/env.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.js';
import { percentile } from './stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUN_MS = 4000;
const WARMUP_MS = 1000;
const CLIENTS = [1, 64];
const CONTENT = 'A benchmark message of about one hundred bytes, like a short chat turn between a user and a model.';

function platformEnv(redisUrl: string, databaseUrl: string, dataDir: string): NodeJS.ProcessEnv {
  return testEnv({ url: redisUrl }, { url: databaseUrl, poolSize: 10 }, {
    DATABASE_MIGRATE_ON_START: 'true',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    HTTP_ACCESS_LOG: 'false',
  });
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
  app.get('/__cpu', (_req, res) => {
    const { user, system } = process.cpuUsage();
    res.json({ us: user + system });
  });
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
    res.status(200).type('application/json').send(`{"messages":[${entries.join(',')}],"source":"cache"}`);
  });
  return app;
}

async function listenLocal(app: express.Express): Promise<http.Server> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function serve(): Promise<void> {
  const config = loadConfig(process.env);
  const platform = await startPlatform({ roles: ['api'], config });
  const { ctx } = platform;
  const redis = new Redis(process.env.REDIS_URL!);
  const auth = new AuthService({ prisma: ctx.db.prisma, redis: ctx.redis, keys: ctx.keys, settings: config.auth });
  const keyOf = (s: string) => `bench:chat:session:{${s}}:messages`;
  const { cacheMaxLen, cacheTtlSeconds } = config.messages;
  const bare = await listenLocal(baselineApp(redis, keyOf, cacheMaxLen, cacheTtlSeconds));
  const authed = await listenLocal(baselineApp(redis, keyOf, cacheMaxLen, cacheTtlSeconds, requireAuth(auth)));
  const url = (server: http.Server) => `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  console.log(JSON.stringify({ api: platform.apiUrl, baseline: url(bare), baselineAuth: url(authed) }));
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
// Load generator.

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU of the server process and of redis-server per request, in µs: steadier than req/s on a busy machine. */
  cpuUs: number;
}

/** CPU time so far (µs) of the server child and of redis-server. */
type CpuProbe = () => Promise<number>;

function request(agent: http.Agent, url: URL, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method, headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function load(
  clients: number,
  next: (client: number, n: number) => { url: URL; method: string; body?: string },
  headers: Record<string, string>,
  okStatus: number,
  cpu: CpuProbe,
): Promise<Figures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const worker = async (client: number) => {
    for (let n = 0; !stop; n++) {
      const r = next(client, n);
      const started = performance.now();
      const status = await request(agent, r.url, r.method, headers, r.body).catch(() => 0);
      if (measuring) {
        latencies.push(performance.now() - started);
        if (status !== okStatus) errors++;
      }
    }
  };
  const running = Array.from({ length: clients }, (_, i) => worker(i));
  await sleep(WARMUP_MS);
  const cpu0 = await cpu();
  measuring = true;
  const t0 = performance.now();
  await sleep(RUN_MS);
  measuring = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpuUsed = (await cpu()) - cpu0;
  stop = true;
  await Promise.all(running);
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  return { rps: latencies.length / elapsed, p50: percentile(sorted, 50) || 0, p99: percentile(sorted, 99) || 0, errors, cpuUs: cpuUsed / Math.max(1, latencies.length) };
}

const best = (a: Figures, b: Figures) => (b.rps > a.rps ? b : a);
const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(2).padStart(6)} ms  p99 ${f.p99.toFixed(2).padStart(7)} ms  cpu ${f.cpuUs.toFixed(0).padStart(4)} µs/req${f.errors ? `  (${f.errors} errors)` : ''}`;

interface Urls {
  api: string;
  baseline: string;
  baselineAuth: string;
}

async function httpBench(urls: Urls, cpu: CpuProbe): Promise<void> {
  const login = await fetch(`${urls.api}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(TEST_ADMIN) });
  const { token } = (await login.json()) as { token: string };
  const auth = { authorization: `Bearer ${token}` };
  const body = JSON.stringify({ role: 'user', content: CONTENT });
  const targets = {
    baseline: { base: `${urls.baseline}/baseline/sessions`, headers: {} },
    'baseline+auth': { base: `${urls.baselineAuth}/baseline/sessions`, headers: auth },
    platform: { base: `${urls.api}/api/sessions`, headers: auth },
  };
  const names = Object.keys(targets) as (keyof typeof targets)[];
  for (const op of ['append', 'read'] as const) {
    for (const clients of CLIENTS) {
      const results = Object.fromEntries(names.map((n) => [n, [] as Figures[]])) as Record<keyof typeof targets, Figures[]>;
      for (let round = 0; round < 2; round++) {
        for (const name of names) {
          const t = targets[name];
          const sessionUrls = Array.from({ length: clients }, (_, i) => new URL(`${t.base}/bench-${clients}-${i}/messages${op === 'read' ? '?limit=50' : ''}`));
          results[name].push(
            await load(clients, (client) => (op === 'append' ? { url: sessionUrls[client]!, method: 'POST', body } : { url: sessionUrls[client]!, method: 'GET' }), t.headers, op === 'append' ? 201 : 200, cpu),
          );
        }
      }
      const [b, ...rest] = names.map((n) => best(results[n][0]!, results[n][1]!));
      console.log(`${op.padEnd(6)} ${String(clients).padStart(2)} client(s)  ${names[0]!.padEnd(13)} ${fmt(b!)}`);
      rest.forEach((f, i) => console.log(`${''.padEnd(20)} ${names[i + 1]!.padEnd(13)} ${fmt(f)}   ${(f.rps / b!.rps).toFixed(2)}x req/s, ${(b!.cpuUs / f.cpuUs).toFixed(2)}x by cpu`));
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
        await ctx.db.pool.query(BARE_INSERT, [b.map((m) => m.messageId), b.map((m) => m.sessionId), b.map((m) => String(m.seq)), b.map((m) => m.role), b.map((m) => m.content), b.map((m) => m.acceptedAt)]);
      }
    }),
  );
  const ceiling = total / ((performance.now() - c0) / 1000);
  console.log(`baseline: bare INSERT ... unnest, 500 rows, ${s.persistShards} at a time ${ceiling.toFixed(0).padStart(7)} rows/s`);
  console.log(`worker: backlog of ${total} in the buffers              ${backlog.toFixed(0).padStart(7)} rows/s   ${(backlog / ceiling).toFixed(2)}x`);
  console.log(`worker: stream from 64 callers, accepted to stored      ${stream.toFixed(0).padStart(7)} rows/s   ${(stream / ceiling).toFixed(2)}x   (accepted at ${(streamed / acceptSeconds).toFixed(0)}/s)`);
  await reset();
  await platform.stop();
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-bench-messages-'));
  const redis = await startRedisServer({ dir: path.join(tmp, 'redis') });
  let pg: Awaited<ReturnType<typeof startPostgresCluster>> | undefined;
  let child: ChildProcess | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      child?.kill('SIGKILL');
      await redis.stop();
      await pg?.stop();
      rmSync(tmp, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    pg = await startPostgresCluster();
    const c = new pgLib.Client({ connectionString: pg.url });
    await c.connect();
    await c.query('CREATE DATABASE bench');
    await c.end();
    const db = new URL(pg.url);
    db.pathname = '/bench';
    const databaseUrl = db.toString();
    const env = platformEnv(redis.url, databaseUrl, path.join(tmp, 'data'));

    console.log(`messages benchmark, ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`);
    child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'messages.ts'), 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const urls = await new Promise<Urls>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.startsWith('{"api"'));
        if (line) resolve(JSON.parse(line));
      });
      child!.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
    });
    console.log(`HTTP: ${RUN_MS / 1000} s a run after ${WARMUP_MS / 1000} s warm-up, better of 2 interleaved runs; content ${CONTENT.length} bytes; reads of 50 from the cache`);
    const probe = new Redis(redis.url);
    const cpu: CpuProbe = async () => {
      const server = ((await (await fetch(`${urls.baseline}/__cpu`)).json()) as { us: number }).us;
      const info = await probe.info('cpu');
      const seconds = ['used_cpu_sys', 'used_cpu_user'].reduce((sum, k) => sum + Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0), 0);
      return server + seconds * 1e6;
    };
    await httpBench(urls, cpu);
    probe.disconnect();
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;

    console.log('Persist to PostgreSQL 15 (fsync off): MESSAGE_PERSIST_BATCH 500, MESSAGE_PERSIST_SHARDS 4');
    await persistBench(redis.url, databaseUrl, path.join(tmp, 'data'));
    console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    await cleanup();
  }
}

if (process.argv[2] === 'serve') await serve();
else await main();
