/**
 * The table parts of `npm run bench:scale` (bench/scale.ts): pool rows, session messages and
 * articles, each table bulk-loaded to the step's size with generate_series (secondary indexes
 * built after the load), then the platform's operations run against it next to a plain baseline
 * of the same step.
 *
 *   pools     the measured pool (titles, group 1) holds the table's newest 10,000 rows, available;
 *             the other rows are 100 other groups' consumed rows (what a long-running pool keeps).
 *             Refill (refillPool, in this process) from an empty list to POOL_SIZE, against the
 *             reference's SELECT + LPUSH without reservation; consumed-marking (markConsumed);
 *             pops over HTTP (POST /api/pools/titles/1/pop of an api,pools child process, which
 *             refills and marks in the background), 8,000 pops by 16 clients, against a bare
 *             node:http route doing only RPOP (bench/bare-pop-server.mjs http). Between rounds the
 *             group's rows are made available again, so the table keeps its size.
 *   messages  100 messages per session, sessions interleaved in the table as chats are in time.
 *             Read-through: the message service's read (owner check, cache miss, DB read of the
 *             newest MESSAGE_CACHE_MAX_LEN, background fill) of sessions this process has not
 *             seen, against the bare SELECT of the same rows; persist: a backlog of 50,000 in the
 *             buffers drained by drainBuffer (as the persist worker, one drain per buffer at once),
 *             against a bare INSERT … unnest of 500 rows per statement.
 *   articles  200 articles per feed, 20 feeds per user, feeds interleaved in the table. A refresh's
 *             insert-and-dedupe: ArticleStore.upsert of 50 items, 45 stored unchanged and 5 new,
 *             against the reference's bare INSERT … ON CONFLICT (url, user_id) DO NOTHING.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/index.js';
import { ArticleStore } from '../src/feeds/article-store.js';
import type { ParsedArticle } from '../src/feeds/parse-feed.js';
import { SANITIZER_VERSION } from '../src/feeds/sanitize-content.js';
import { drainBuffer } from '../src/messages/drain-buffer.js';
import { newMessageId } from '../src/messages/message-id.js';
import { MessageStore } from '../src/messages/message-store.js';
import { PersistBuffer } from '../src/messages/persist-buffer.js';
import { wireMessagesApi } from '../src/messages/wiring.js';
import { markConsumed } from '../src/pools/mark-consumed.js';
import { encodeItem } from '../src/pools/pool-item.js';
import { PoolLists } from '../src/pools/pool-lists.js';
import { PoolRows } from '../src/pools/pool-rows.js';
import { refillPool } from '../src/pools/refill-pool.js';
import type { AcceptedMessage } from '../src/queues/declarations/messages.js';
import { startPlatform } from '../src/runtime/start-platform.js';
import { testEnv } from '../test/support/env.js';
import { adminToken, BARE_POP_KEY, spawnServer } from './http-load.js';
import { median, percentile } from './stats.js';
import { insertSeries, int, logger, mb, reload, tableBytes, usedMemoryHuman, type CpuMeter, type Env, type ScaleRecord } from './scale-support.js';

export interface Services {
  redisUrl: string;
  dbUrl: string;
  dataDir: string;
}

const ROUNDS = 3;
const p = (sortedXs: number[], q: number) => percentile(sortedXs, q);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

function shuffled<T>(xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---- pools ----------------------------------------------------------------------------------

const GROUP = 1;
const WORKING_ROWS = 10_000;
const POPS = 8000;
const POP_CLIENTS = 16;
const TEXT = 'A pooled title of about fifty bytes, ready to serve';

interface PopRun {
  perSecond: number;
  /** CPU µs per pop: the load generator, the server, Redis and PostgreSQL (the background refill and marking). */
  cpuUs: number;
  p50: number;
  p99: number;
  errors: number;
  fromDb: number;
}

/** `count` POSTs to `url + path` by `clients` keep-alive clients, each sending its next as soon as it has an answer. */
async function popRun(
  meter: CpuMeter,
  serverPid: number,
  url: string,
  path: string,
  headers: Record<string, string>,
  count: number,
  clients: number,
): Promise<PopRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const base = new URL(url);
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  let fromDb = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.request({ host: base.hostname, port: base.port, path, method: 'POST', agent, headers: { ...headers, 'content-length': '0' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          if (res.statusCode !== 200) errors += 1;
          else if (Buffer.concat(chunks).includes('"source":"db"')) fromDb += 1;
          resolve();
        });
      });
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end();
    });
  const run = await meter.measure(
    () =>
      Promise.all(
        Array.from({ length: clients }, async () => {
          while (issued < count) {
            issued += 1;
            await once();
          }
        }),
      ),
    [serverPid],
  );
  agent.destroy();
  const l = sorted(latencies);
  return { perSecond: count / (run.ms / 1000), cpuUs: run.cpuUs / count, p50: p(l, 50), p99: p(l, 99), errors, fromDb };
}

const medianRun = (runs: PopRun[]) => [...runs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(runs.length / 2)]!;

export async function benchPools(env: Env, steps: number[], record: ScaleRecord, services: Services): Promise<void> {
  const { db, redis, keys } = env;
  const rows = new PoolRows(db.pool);
  const lists = new PoolLists(redis, keys, { commandTimeoutMs: 60_000, connectTimeoutMs: 10_000 });
  const settings = env.config.pools;
  const [poolKey, consumedKey, lockKey] = [keys.pool('titles', GROUP), keys.poolConsumed('titles', GROUP), keys.poolRefillLock('titles', GROUP)];
  /** The measured group's rows available again and its lists empty (between rounds; not timed). */
  const resetGroup = async () => {
    await redis.del(poolKey, consumedKey, lockKey);
    await db.pool.query(`UPDATE titles SET status = 'available', reserved_at = NULL, consumed_at = NULL WHERE group_id = $1 AND status <> 'available'`, [
      GROUP,
    ]);
  };
  const popAll = async () => {
    while ((await lists.pop('titles', GROUP, 1000, () => undefined)).items.length) {
      /* into the consumed list */
    }
  };
  console.log(
    `\nPool rows: refill of an empty pool to ${int(settings.size)} (batches of ${settings.refillBatch}), consumed-marking, and ${int(POPS)} HTTP pops by ${POP_CLIENTS} clients; ` +
      `the measured group holds the newest ${int(WORKING_ROWS)} rows, the rest are other groups' consumed rows`,
  );
  const bare = await spawnServer(
    undefined,
    ['bench/bare-pop-server.mjs', 'http', services.redisUrl, BARE_POP_KEY],
    { PATH: process.env.PATH, NODE_ENV: 'production' },
    /listening (\d+)/,
  );
  const bareUrl = `http://127.0.0.1:${bare.match[1]}`;
  let nextBareId = 1_000_000_000;
  const bareRound = async () => {
    await redis.del(BARE_POP_KEY);
    for (let i = 0; i < POPS; i += 4000) await redis.lpush(BARE_POP_KEY, ...Array.from({ length: 4000 }, () => encodeItem({ id: nextBareId++, text: TEXT })));
    return popRun(env.meter, bare.server.pid, bareUrl, '/pop', {}, POPS, POP_CLIENTS);
  };
  try {
    await bareRound(); // warm-up
    for (const n of steps) {
      await redis.flushall();
      const first = n - WORKING_ROWS; // rows after this one are the measured group's
      const loadSeconds = await reload(db.pool, 'titles', () =>
        insertSeries(
          db.pool,
          `INSERT INTO titles (group_id, batch_id, text, status, consumed_at, created_at)
           SELECT CASE WHEN i > ${first} THEN ${GROUP} ELSE 2 + i % 100 END, i / 10000, '${TEXT} ' || i,
                  (CASE WHEN i > ${first} THEN 'available' ELSE 'consumed' END)::pool_row_status,
                  CASE WHEN i > ${first} THEN NULL ELSE now() END, now()
             FROM generate_series($1::int, $2::int) i`,
          1,
          n,
        ),
      );
      const sizes = await tableBytes(db.pool, ['titles']);

      // Refill (and marking) in this process, against the reference's SELECT + LPUSH.
      const refillRates: number[] = [];
      const referenceRates: number[] = [];
      const markRates: number[] = [];
      const cpu = { refill: [] as number[], reference: [] as number[], mark: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        await resetGroup();
        const refilled = await env.meter.measure(() => refillPool({ lists, rows, settings, logger }, 'titles', GROUP));
        const pushed = 'pushed' in refilled.value ? refilled.value.pushed : 0;
        if (pushed !== settings.size) throw new Error(`refill pushed ${pushed} rows, expected ${settings.size}`);
        refillRates.push(pushed / (refilled.ms / 1000));
        cpu.refill.push(refilled.cpuUs / pushed);
        await popAll();
        const marking = await env.meter.measure(async () => {
          let marked = 0;
          for (;;) {
            const r = await markConsumed({ lists, rows, settings }, 'titles', GROUP);
            marked += r.marked;
            if (!r.more) return marked;
          }
        });
        markRates.push(marking.value / (marking.ms / 1000));
        cpu.mark.push(marking.cpuUs / marking.value);

        await resetGroup();
        const c0 = env.meter.read();
        const t0 = performance.now();
        let referencePushed = 0;
        let after = { batchId: 2 ** 31 - 1, id: '0' };
        while (referencePushed < settings.size) {
          const { rows: batch } = await db.pool.query<{ id: string; batch_id: number; text: string }>(
            `SELECT id, batch_id, text FROM titles WHERE group_id = $1 AND status = 'available' AND (batch_id < $2 OR (batch_id = $2 AND id > $3))
             ORDER BY batch_id DESC, id ASC LIMIT $4`,
            [GROUP, after.batchId, after.id, Math.min(settings.refillBatch, settings.size - referencePushed)],
          );
          if (!batch.length) break;
          await redis.lpush('bench:reference:pool', ...batch.map((r) => encodeItem({ id: Number(r.id), text: r.text })));
          referencePushed += batch.length;
          after = { batchId: batch.at(-1)!.batch_id, id: batch.at(-1)!.id };
        }
        referenceRates.push(referencePushed / ((performance.now() - t0) / 1000));
        cpu.reference.push((env.meter.read() - c0) / referencePushed);
        await redis.del('bench:reference:pool');
      }

      // Pops over HTTP: the api role serves them, the pools role refills and marks meanwhile.
      await resetGroup();
      const child = await spawnServer(
        undefined,
        ['workers/run-role.ts', 'api,pools'],
        testEnv(
          { url: services.redisUrl },
          { url: services.dbUrl, poolSize: 10 },
          { NODE_ENV: 'production', DATA_DIR: services.dataDir, LOG_LEVEL: 'warn', HTTP_ACCESS_LOG: 'false', POOL_CHECK_INTERVAL_MS: '1000' },
        ),
        /API\s+(http:\/\/\S+)\/api/,
      );
      const pops: PopRun[] = [];
      const bares: PopRun[] = [];
      try {
        const apiUrl = child.match[1]!;
        const auth = { authorization: `Bearer ${await adminToken(apiUrl)}` };
        const popRound = async () => {
          // The pool check prefills the empty pool; wait until it is full and no refill runs.
          const t0 = Date.now();
          while ((await redis.llen(poolKey)) < settings.size || (await redis.exists(lockKey))) {
            if (Date.now() - t0 > 60_000) {
              const state = { length: await redis.llen(poolKey), refilling: await redis.exists(lockKey) };
              throw new Error(`the pools role did not prefill the pool in 60 s (${JSON.stringify(state)}); its output:\n${child.server.output().slice(-3000)}`);
            }
            await sleep(50);
          }
          const c0 = env.meter.read([child.server.pid]);
          const run = await popRun(env.meter, child.server.pid, apiUrl, `/api/pools/titles/${GROUP}/pop`, auth, POPS, POP_CLIENTS);
          // The background marking and refill finish (and count) before the rows are reset.
          while ((await redis.llen(consumedKey)) > 0 || (await redis.exists(lockKey))) await sleep(50);
          run.cpuUs = (env.meter.read([child.server.pid]) - c0) / POPS;
          await resetGroup();
          return run;
        };
        await popRound(); // warm-up of the fresh process
        for (let round = 0; round < ROUNDS; round++) {
          pops.push(await popRound());
          bares.push(await bareRound());
        }
      } finally {
        await child.server.stop(10_000);
      }
      const pop = medianRun(pops);
      const barePop = medianRun(bares);
      const refill = median(refillRates);
      const reference = median(referenceRates);
      const mark = median(markRates);

      console.log(
        `  ${int(n)} rows (bulk load ${loadSeconds.toFixed(1)} s; titles ${mb(sizes.titles!)} with indexes; Redis used_memory ${await usedMemoryHuman(redis)})`,
      );
      const cpuRefill = median(cpu.refill);
      const cpuReference = median(cpu.reference);
      const cpuMark = median(cpu.mark);
      console.log(
        `    refill ${int(refill)} rows/s (${cpuRefill.toFixed(1)} µs CPU a row)   | reference SELECT + LPUSH ${int(reference)} rows/s (${cpuReference.toFixed(1)} µs CPU)   → ${(reference / refill).toFixed(2)}x the time`,
      );
      console.log(`    consumed-marking ${int(mark)} rows/s (${cpuMark.toFixed(1)} µs CPU a row)`);
      console.log(
        `    HTTP pop ${int(pop.perSecond)} pops/s (${pop.cpuUs.toFixed(0)} µs CPU a pop with the background refill and marking; p50 ${pop.p50.toFixed(2)} ms, p99 ${pop.p99.toFixed(2)} ms, ${pop.fromDb} from the DB, ${pop.errors} errors)` +
          `   | bare node:http RPOP ${int(barePop.perSecond)} pops/s (${barePop.cpuUs.toFixed(0)} µs CPU; p99 ${barePop.p99.toFixed(2)} ms)   → ${(barePop.perSecond / pop.perSecond).toFixed(2)}x the time`,
      );
      record.add({
        part: 'pools',
        name: 'refill, per row',
        unit: 'µs',
        step: n,
        ours: 1e6 / refill,
        base: 1e6 / reference,
        cpu: { ours: cpuRefill, base: cpuReference },
      });
      record.add({ part: 'pools', name: 'consumed-marking, per row', unit: 'µs', step: n, ours: 1e6 / mark, cpu: { ours: cpuMark } });
      record.add({
        part: 'pools',
        name: 'HTTP pop route, per pop',
        unit: 'µs',
        step: n,
        ours: 1e6 / pop.perSecond,
        base: 1e6 / barePop.perSecond,
        cpu: { ours: pop.cpuUs, base: barePop.cpuUs },
      });
    }
  } finally {
    await bare.server.stop(10_000);
  }
  await redis.flushall();
}

// ---- messages -------------------------------------------------------------------------------

const PER_SESSION = 100;
const READS = 1000;
const PERSIST = 50_000;
const CONTENT = 'A benchmark message of about one hundred bytes, like a short chat turn between a user and a model.';
/** Where the bulk-loaded messages' ids and times start (thirty days ago, one a millisecond). */
const HISTORY_START = Date.now() - 30 * 86_400_000;

let seqBase = Date.now() * 1000;
function accepted(sessionId: string, i: number): AcceptedMessage {
  return { messageId: newMessageId(), sessionId, seq: ++seqBase, role: i % 2 ? 'assistant' : 'user', content: CONTENT, acceptedAt: new Date().toISOString() };
}

export async function benchMessages(env: Env, steps: number[], record: ScaleRecord, services: Services): Promise<void> {
  const { db } = env;
  const config = loadConfig(
    testEnv(
      { url: services.redisUrl },
      { url: services.dbUrl, poolSize: 10 },
      { DATA_DIR: services.dataDir, LOG_LEVEL: 'silent', REDIS_COMMAND_TIMEOUT_MS: '60000', REDIS_QUEUE_COMMAND_TIMEOUT_MS: '60000' },
    ),
  );
  const platform = await startPlatform({ roles: [], config });
  const { ctx } = platform;
  const s = config.messages;
  const store = new MessageStore(ctx.db);
  const buffer = new PersistBuffer(ctx.keys, s);
  console.log(
    `\nSession messages: ${PER_SESSION} per session; read-through of ${int(READS)} sessions not seen by the reading process (limit 50, DB read of ${s.cacheMaxLen}), ` +
      `persist of a ${int(PERSIST)}-message backlog (${s.persistShards} buffers, batches of ${s.persistBatch})`,
  );
  try {
    for (const n of steps) {
      const sessions = n / PER_SESSION;
      let userId = 0;
      await ctx.redis.flushall();
      const loadSeconds = await reload(db.pool, 'chat_messages', async () => {
        const { rows } = await db.pool.query<{ id: number }>(
          `INSERT INTO users (username, password_hash, updated_at) VALUES ('bench-scale-messages', 'x', now())
           ON CONFLICT (username) DO UPDATE SET updated_at = now() RETURNING id`,
        );
        userId = rows[0]!.id;
        await db.pool.query('TRUNCATE chat_sessions');
        await db.pool.query(`INSERT INTO chat_sessions (session_id, user_id) SELECT 's' || j, $1 FROM generate_series(0, $2::int - 1) j`, [userId, sessions]);
        // Ids shaped as newMessageId's (UUID v7: milliseconds first), one millisecond apart.
        await insertSeries(
          db.pool,
          `INSERT INTO chat_messages (message_id, session_id, seq, role, content, accepted_at)
           SELECT substr(x.h, 1, 8) || '-' || substr(x.h, 9, 4) || '-7' || substr(x.r, 1, 3) || '-' || substr(x.r, 4, 4) || '-' || substr(x.r, 8, 12),
                  's' || (i % ${sessions}), i, (CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END)::message_role,
                  '${CONTENT} ' || i, to_timestamp((${HISTORY_START} + i) / 1000.0)
             FROM generate_series($1::int, $2::int) i, LATERAL (SELECT lpad(to_hex(${HISTORY_START}::bigint + i), 12, '0') AS h, md5(i::text) AS r) x`,
          1,
          n,
        );
      });
      await db.pool.query('VACUUM ANALYZE chat_sessions');
      const sizes = await tableBytes(db.pool, ['chat_messages', 'chat_sessions']);

      // Read-through: sessions split in two, one half read by the platform, the other by the bare SELECT.
      const picked = shuffled(Array.from({ length: sessions }, (_, j) => `s${j}`)).slice(0, 2 * READS);
      const ours = picked.filter((_, i) => i % 2 === 0);
      const theirs = picked.filter((_, i) => i % 2 === 1);
      const readMs: number[] = [];
      const bareMs: number[] = [];
      const readCpu = { ours: 0, bare: 0 };
      let hits = 0;
      let service = wireMessagesApi(ctx).service;
      const CHUNK = 100; // reads of each side in turn, so each side's CPU is measured on its own
      for (let c = 0; c < READS; c += CHUNK) {
        let used = env.meter.read();
        for (let r = c; r < c + CHUNK; r++) {
          const session = ours[r % ours.length]!;
          if (r > 0 && r % ours.length === 0) {
            // Every session read once (a small step): a new service, which has seen none, and empty lists again.
            await sleep(300);
            await ctx.redis.del(...ours.map((o) => ctx.keys.sessionMessages(o)));
            service = wireMessagesApi(ctx).service;
          }
          const t0 = performance.now();
          const result = await service.read(userId, session, 50);
          const took = performance.now() - t0;
          if (result.source === 'db') readMs.push(took);
          else hits += 1;
          if (result.entries.length !== 50) throw new Error(`read ${result.entries.length} messages of session ${session}`);
        }
        await sleep(50); // the background fills of the chunk's reads are part of its cost
        readCpu.ours += env.meter.read() - used;
        used = env.meter.read();
        for (let r = c; r < c + CHUNK; r++) {
          const t0 = performance.now();
          await db.pool.query(
            `SELECT message_id, seq, role, content, accepted_at FROM chat_messages WHERE session_id = $1 ORDER BY seq DESC, message_id DESC LIMIT $2`,
            [theirs[r % theirs.length], s.cacheMaxLen],
          );
          bareMs.push(performance.now() - t0);
        }
        readCpu.bare += env.meter.read() - used;
      }
      const read = sorted(readMs);
      const bareRead = sorted(bareMs);

      // Persist: a backlog in the buffers, drained as the worker drains it, against bare INSERTs.
      const persistRates: number[] = [];
      const bareRates: number[] = [];
      const persistCpu = { ours: [] as number[], bare: [] as number[] };
      for (let round = 0; round < 2; round++) {
        const messages = Array.from({ length: PERSIST }, (_, i) => accepted(`s${Math.floor(Math.random() * sessions)}`, i));
        for (let i = 0; i < PERSIST; i += 5000) {
          const pipeline = ctx.redis.pipeline();
          for (const m of messages.slice(i, i + 5000)) pipeline.rpush(ctx.keys.messagePersistBuffer(buffer.shardOf(m.sessionId)), JSON.stringify(m));
          await pipeline.exec();
        }
        const drain = await env.meter.measure(() =>
          Promise.all(Array.from({ length: s.persistShards }, (_, shard) => drainBuffer({ redis: ctx.redis, buffer, store, logger }, shard, 600_000))),
        );
        persistRates.push(PERSIST / (drain.ms / 1000));
        persistCpu.ours.push(drain.cpuUs / PERSIST);
        const inserted = drain.value.reduce((sum, d) => sum + d.inserted, 0);
        if (inserted !== PERSIST) throw new Error(`persisted ${inserted} of ${PERSIST}`);

        const more = Array.from({ length: PERSIST }, (_, i) => accepted(`s${Math.floor(Math.random() * sessions)}`, i));
        const bareInsert = await env.meter.measure(() =>
          Promise.all(
            Array.from({ length: s.persistShards }, async (_, lane) => {
              for (let i = lane * 500; i < PERSIST; i += s.persistShards * 500) {
                const b = more.slice(i, i + 500);
                await db.pool.query(
                  `INSERT INTO chat_messages (message_id, session_id, seq, role, content, accepted_at)
                 SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::bigint[], $4::text[]::message_role[], $5::text[], $6::timestamptz[])
                 ON CONFLICT (message_id) DO NOTHING`,
                  [
                    b.map((m) => m.messageId),
                    b.map((m) => m.sessionId),
                    b.map((m) => String(m.seq)),
                    b.map((m) => m.role),
                    b.map((m) => m.content),
                    b.map((m) => m.acceptedAt),
                  ],
                );
              }
            }),
          ),
        );
        bareRates.push(PERSIST / (bareInsert.ms / 1000));
        persistCpu.bare.push(bareInsert.cpuUs / PERSIST);
      }
      const persist = median(persistRates);
      const barePersist = median(bareRates);

      console.log(
        `  ${int(n)} messages in ${int(sessions)} sessions (bulk load ${loadSeconds.toFixed(1)} s; chat_messages ${mb(sizes.chat_messages!)}, chat_sessions ${mb(sizes.chat_sessions!)}; ` +
          `Redis used_memory ${await usedMemoryHuman(ctx.redis)} with the lists filled by the reads)`,
      );
      const cpuRead = { ours: readCpu.ours / READS, base: readCpu.bare / READS };
      const cpuPersist = { ours: median(persistCpu.ours), base: median(persistCpu.bare) };
      console.log(
        `    read-through (DB) p50 ${p(read, 50).toFixed(2)} ms, p99 ${p(read, 99).toFixed(2)} ms, ${cpuRead.ours.toFixed(0)} µs CPU a read (${read.length} reads; ${hits} found a fill of an earlier read)` +
          `   | bare SELECT p50 ${p(bareRead, 50).toFixed(2)} ms, p99 ${p(bareRead, 99).toFixed(2)} ms, ${cpuRead.base.toFixed(0)} µs CPU   → p99 ${(p(read, 99) / p(bareRead, 99)).toFixed(2)}x`,
      );
      console.log(
        `    persist ${int(persist)} rows/s (${cpuPersist.ours.toFixed(1)} µs CPU a row)   | bare INSERT … unnest ${int(barePersist)} rows/s (${cpuPersist.base.toFixed(1)} µs CPU)   → ${(barePersist / persist).toFixed(2)}x the time`,
      );
      record.add({ part: 'messages', name: 'read-through (DB), p99', unit: 'ms', step: n, ours: p(read, 99), base: p(bareRead, 99) });
      record.add({ part: 'messages', name: 'read-through (DB), p50', unit: 'ms', step: n, ours: p(read, 50), base: p(bareRead, 50), cpu: cpuRead });
      record.add({ part: 'messages', name: 'persist, per row', unit: 'µs', step: n, ours: 1e6 / persist, base: 1e6 / barePersist, cpu: cpuPersist });
    }
  } finally {
    await platform.stop();
  }
}

// ---- articles -------------------------------------------------------------------------------

const PER_FEED = 200;
const FEEDS_PER_USER = 20;
const REFRESHES = 300;
const KNOWN = 45;
const NEW = 5;
/** published_at of article i is PUBLISHED_BASE + i seconds. */
const PUBLISHED_BASE = Date.UTC(2026, 0, 1);

/** Article `i` of feed `feedId` exactly as the bulk load stores it. */
function article(feedId: number, i: number): ParsedArticle {
  const url = `https://site${feedId}.example/posts/${i}`;
  return {
    url,
    guid: url,
    title: `Article ${i} of feed ${feedId}`,
    author: `Author ${i % 97}`,
    summary: `<p>${'Summary text of an article. '.repeat(4)}${i}</p>`,
    content: `<p>${'Body text of the article, a paragraph of it. '.repeat(5)}</p>`,
    publishedAt: new Date(PUBLISHED_BASE + i * 1000),
    enclosures: [],
  };
}

const BARE_UPSERT = `
INSERT INTO articles (feed_id, user_id, url, guid, title, author, summary, content, published_at, enclosures, sanitizer_version, updated_at)
SELECT $1, $2, a.url, a.guid, a.title, a.author, a.summary, a.content, a.published_at, '[]'::jsonb, $10, now()
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[]) AS a(url, guid, title, author, summary, content, published_at)
ON CONFLICT (url, user_id) DO NOTHING`;

export async function benchArticles(env: Env, steps: number[], record: ScaleRecord): Promise<void> {
  const { db } = env;
  const articles = new ArticleStore(db, env.config.feeds.upsertBatchSize);
  console.log(
    `\nArticles: ${PER_FEED} per feed; a refresh's insert-and-dedupe of ${KNOWN + NEW} items (${KNOWN} stored unchanged, ${NEW} new), ${int(REFRESHES)} refreshes`,
  );
  for (const n of steps) {
    const feeds = n / PER_FEED;
    const users = Math.ceil(feeds / FEEDS_PER_USER);
    await reload(db.pool, 'feeds', async () => {
      await db.pool.query(`DELETE FROM users WHERE username LIKE 'bench-scale-articles-%'`);
      await db.pool.query(
        `INSERT INTO users (username, password_hash, updated_at) SELECT 'bench-scale-articles-' || u, 'x', now() FROM generate_series(1, $1::int) u`,
        [users],
      );
      await db.pool.query(
        `INSERT INTO feeds (user_id, url, status, updated_at)
         SELECT u.id, 'https://site' || f || '.example/feed.xml', 'ok', now()
           FROM generate_series(1, $1::int) f JOIN users u ON u.username = 'bench-scale-articles-' || (1 + (f - 1) / ${FEEDS_PER_USER})`,
        [feeds],
      );
    });
    const loadSeconds = await reload(db.pool, 'articles', () =>
      insertSeries(
        db.pool,
        `INSERT INTO articles (feed_id, user_id, url, guid, title, author, summary, content, published_at, enclosures, sanitizer_version, updated_at)
         SELECT f.id, f.user_id, 'https://site' || f.id || '.example/posts/' || i, 'https://site' || f.id || '.example/posts/' || i,
                'Article ' || i || ' of feed ' || f.id, 'Author ' || (i % 97),
                '<p>' || repeat('Summary text of an article. ', 4) || i || '</p>', '<p>' || repeat('Body text of the article, a paragraph of it. ', 5) || '</p>',
                to_timestamp(${PUBLISHED_BASE / 1000} + i), '[]'::jsonb, ${SANITIZER_VERSION}, now()
           FROM generate_series($1::int, $2::int) i JOIN feeds f ON f.id = 1 + i % ${feeds}`,
        1,
        n,
      ),
    );
    const sizes = await tableBytes(db.pool, ['articles', 'feeds']);
    const { rows: feedRows } = await db.pool.query<{ id: number; user_id: number }>('SELECT id, user_id FROM feeds');
    const order = shuffled(feedRows);
    /** NEW new articles (numbered past the table) and the feed's newest KNOWN as stored. */
    const refresh = (feed: { id: number }, fresh: number) => {
      const last = n - ((n - (feed.id - 1)) % feeds); // the largest i <= n with 1 + i % feeds = feed.id
      const known = Array.from({ length: KNOWN }, (_, k) => article(feed.id, last - k * feeds));
      const added = Array.from({ length: NEW }, (_, k) => article(feed.id, n + fresh * NEW + k + 1));
      return [...added, ...known];
    };
    const ourMs: number[] = [];
    const bareMs: number[] = [];
    const used = { ours: 0, bare: 0 };
    const CHUNK = 50; // refreshes of each side in turn, so each side's CPU is measured on its own
    for (let c = 0; c < REFRESHES; c += CHUNK) {
      let c0 = env.meter.read();
      for (let r = c; r < c + CHUNK; r++) {
        // Different feeds each time (a small step's few feeds again, with new items each time).
        const feed = order[(2 * r) % order.length]!;
        const t0 = performance.now();
        const counts = await articles.upsert({ id: feed.id, userId: feed.user_id }, refresh(feed, r));
        ourMs.push(performance.now() - t0);
        if (counts.inserted !== NEW || counts.unchanged !== KNOWN) throw new Error(`refresh of feed ${feed.id}: ${JSON.stringify(counts)}`);
      }
      used.ours += env.meter.read() - c0;
      c0 = env.meter.read();
      for (let r = c; r < c + CHUNK; r++) {
        const other = order[(2 * r + 1) % order.length]!;
        const b = refresh(other, r);
        const t0 = performance.now();
        const { rowCount } = await db.pool.query(BARE_UPSERT, [
          other.id,
          other.user_id,
          b.map((a) => a.url),
          b.map((a) => a.guid),
          b.map((a) => a.title),
          b.map((a) => a.author),
          b.map((a) => a.summary),
          b.map((a) => a.content),
          b.map((a) => a.publishedAt!.toISOString()),
          SANITIZER_VERSION,
        ]);
        bareMs.push(performance.now() - t0);
        if (rowCount !== NEW) throw new Error(`bare insert of feed ${other.id} added ${rowCount} rows`);
      }
      used.bare += env.meter.read() - c0;
    }
    const ours = sorted(ourMs);
    const bare = sorted(bareMs);
    console.log(
      `  ${int(n)} articles in ${int(feeds)} feeds of ${int(users)} users (bulk load ${loadSeconds.toFixed(1)} s; articles ${mb(sizes.articles!)} with indexes and TOAST, feeds ${mb(sizes.feeds!)}; ` +
        `Redis used_memory ${await usedMemoryHuman(env.redis)}: articles do not use it)`,
    );
    const cpu = { ours: used.ours / REFRESHES, base: used.bare / REFRESHES };
    console.log(
      `    insert-and-dedupe p50 ${p(ours, 50).toFixed(2)} ms, p99 ${p(ours, 99).toFixed(2)} ms, ${cpu.ours.toFixed(0)} µs CPU per refresh` +
        `   | bare INSERT … ON CONFLICT DO NOTHING p50 ${p(bare, 50).toFixed(2)} ms, p99 ${p(bare, 99).toFixed(2)} ms, ${cpu.base.toFixed(0)} µs CPU   → p50 ${(p(ours, 50) / p(bare, 50)).toFixed(2)}x`,
    );
    record.add({
      part: 'articles',
      name: `refresh insert-and-dedupe (${KNOWN + NEW} items), p50`,
      unit: 'ms',
      step: n,
      ours: p(ours, 50),
      base: p(bare, 50),
      cpu,
    });
    record.add({ part: 'articles', name: `refresh insert-and-dedupe (${KNOWN + NEW} items), p99`, unit: 'ms', step: n, ours: p(ours, 99), base: p(bare, 99) });
  }
}
