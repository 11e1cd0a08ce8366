/**
 * One failover under running work, the same on a Sentinel set-up and on a Redis Cluster with
 * replicas, and what it cost. Work in flight, all through the platform (API, roles, workers):
 *
 * - messages: writers POST /api/sessions/:id/messages to sessions whose list and persist buffer
 *   live on the master that is killed; every 201 is recorded;
 * - pool pops: poppers POST /api/pools/titles/:g/pop on a pool of that master; every 200 is recorded;
 * - crawl chains: IPs crawled every second (a stand-in crawler, the real pipeline moving each chain on).
 *
 * The failover: the master's replica is paused (SIGSTOP) and its replication link closed (CLIENT
 * KILL TYPE replica on the master) while a few more requests are answered, so that it lags as a
 * replica over a real network can (on loopback it is otherwise microseconds behind, and what the
 * master sent sits in the paused replica's socket buffer: a failover would hardly ever lose
 * anything); then the master is killed
 * (SIGKILL) and the replica resumed; the sentinels (the cluster) promote it. The killed node is
 * started again as a replica (what an operator does), so that writes waiting for a replica
 * (REDIS_REPLICA_ACKS) can be confirmed again. The work goes on until every chain ran twice more
 * and messages and pops were answered again, then stops.
 *
 * What is measured: acknowledged messages that cannot be read back (GET) or were never stored,
 * pool rows served twice, chains that are not whole (not exactly one pending crawl, the chain's
 * link, or processed links with a gap or a repeat), dead jobs; and how long until the work went on.
 */
import type { Job, JobType, Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import type { PlatformContext } from '../../src/context.js';
import { PENDING_STATES } from '../../src/queues/job-states.js';
import { keySlot } from '../../src/redis/key-slot.js';
import { chainBucket } from '../../src/crawl-scheduling/crawl-chain.js';
import { delayedDueAt } from '../../src/queues/delayed-due.js';
import { nextTaskId } from '../../src/crawl-scheduling/task-ids.js';
import { sessionHash } from '../../src/messages/session-hash.js';
import { startStandInCrawler } from '../cluster-mode/stand-in-crawler.js';
import { waitFor } from '../support/wait.js';
import type { HaPlatform } from './support.js';

export interface FailoverTopology {
  /** The master to kill (the one holding the work's keys) and the replica that will replace it. */
  victim(ctx: PlatformContext): Promise<{ master: number; replica: number }>;
  kill(port: number): Promise<void>;
  pause(port: number): void;
  resume(port: number): void;
  /** Closes the master's replication links (the paused replica cannot reconnect). */
  cutReplication(port: number): Promise<void>;
  /** Resolves with the promoted replica's port. */
  promoted(oldMaster: number): Promise<number>;
  /** Starts the killed node again and resolves once it is a replica in sync. */
  rejoin(oldMaster: number): Promise<void>;
}

export interface FailoverReport {
  mode: string;
  messagesAcknowledged: number;
  /** Acknowledged (201) but not among the messages GET returns. */
  messagesUnreadable: number;
  /** Acknowledged (201) but not stored in the DB once the persist buffers are empty. */
  messagesUnstored: number;
  /** Answered 201 while the replica lagged (between the pause and the kill). */
  messagesDuringLag: number;
  popsServed: number;
  popsDuringLag: number;
  /** Rows served more than once (each counted once). */
  rowsServedTwice: number;
  /** IPs whose chain is not whole afterwards. */
  brokenChains: string[];
  deadJobs: number;
  /** Requests refused (503) over the run: no acknowledgement, nothing to lose. */
  refused: { messages: number; pops: number };
  /** Kill → promotion, and kill → the first pop served from the pool (Redis) after the promotion. */
  promotionMs: number;
  resumedMs: number;
  unexpected: string[];
}

export const WORK_ENV: Record<string, string> = {
  // Chains crawl every second; no reconciliation after the one at start (the next is hours away):
  // a chain the failover broke stays broken and shows.
  SCHEDULER_BASE_INTERVAL: '1',
  SCHEDULER_MIN_INTERVAL: '1',
  SCHEDULER_MAX_INTERVAL: '1',
  SCHEDULER_TICK_MS: '200',
  SCHEDULER_SPREAD_SECONDS: '0',
  SCHEDULER_PAGES_ON_SALE: '1',
  SCHEDULER_PAGES_SOLD: '1',
  // Jobs whose completion the failover lost are active on the promoted replica without a live
  // lock: the stalled-job check hands them back, soon.
  WORKER_LOCK_DURATION_MS: '5000',
  WORKER_STALLED_INTERVAL_MS: '2000',
  // A job that meets the outage (or a write its replicas did not confirm) is retried. Until the
  // worker factory tells outages apart (another change), each such try spends an attempt.
  JOB_ATTEMPTS: '25',
  JOB_BACKOFF_MS: '200',
  MESSAGE_CACHE_MAX_LEN: '1000',
  MESSAGE_PERSIST_SWEEP_MS: '1000',
  // A drain that held a buffer's lease when the master died (its release lost or never sent)
  // keeps the buffer until the lease runs out: short here.
  MESSAGE_PERSIST_LOCK_MS: '3000',
  POOL_SIZE: '300',
  POOL_REFILL_THRESHOLD: '150',
  POOL_REFILL_BATCH: '150',
  POOL_TRIGGER_INTERVAL_MS: '10',
  POOL_CHECK_INTERVAL_MS: '1000',
};

const UNFINISHED = [...PENDING_STATES, 'active'];
const IPS = 6;
const SESSIONS = 12;
const POOL_ROWS = 6000;
const MESSAGE_WRITERS = 4;
const POPPERS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function jobsIn(queues: Queue[], states: string[]): Promise<{ queue: Queue; job: Job }[]> {
  const lists = await Promise.all(
    queues.map(async (queue) => ((await queue.getJobs(states as JobType[], 0, -1)) as Job[]).filter(Boolean).map((job) => ({ queue, job }))),
  );
  return lists.flat();
}

/** Whether `key` lives on the node `port` (always, off a Cluster). */
function keyOn(ctx: PlatformContext, key: string, port: number): boolean {
  const redis = ctx.redis;
  if (!(redis instanceof Cluster)) return true;
  return redis.slots[keySlot(key)]?.[0] === `127.0.0.1:${port}`;
}

export async function runFailover(t: HaPlatform, topology: FailoverTopology, mode: string): Promise<FailoverReport> {
  const ctx = t.platform.ctx;
  const { api } = t;
  const sql = async <T = any>(text: string, params: unknown[] = []) => (await ctx.db.pool.query(text, params)).rows as T[];
  const { master, replica } = await topology.victim(ctx);
  const unexpected: string[] = [];
  const slug = mode.replace(/[^A-Za-z0-9]+/g, '-');

  // Sessions and a pool whose keys are on the master that will be killed.
  const shards = ctx.config.messages.persistShards;
  const sessions: string[] = [];
  for (let i = 0; sessions.length < SESSIONS; i++) {
    const s = `${slug}-s${i}`;
    if (keyOn(ctx, ctx.keys.sessionMessages(s), master) && keyOn(ctx, ctx.keys.messagePersistBuffer(sessionHash(s) % shards), master)) sessions.push(s);
    if (i > 100_000) throw new Error('no session lives on the master to kill');
  }
  let group = 1;
  while (!keyOn(ctx, ctx.keys.pool('titles', group), master)) group++;
  const items = Array.from({ length: POOL_ROWS }, (_, n) => ({ text: `${slug}-row-${n}`, batchId: 1 }));
  const imported = await api.post(`/api/pools/titles/${group}/items`, { items });
  if (imported.status !== 201) throw new Error(`import: ${imported.status} ${JSON.stringify(imported.body)}`);
  await waitFor(async () => (await ctx.redis.llen(ctx.keys.pool('titles', group))) >= 150, { message: 'the pool was not filled' });

  // Chains.
  const firstTask = new Map<number, string>();
  for (let i = 0; i < IPS; i++) {
    const create = () => api.post('/api/ips', { name: `${slug} ${i}`, keyword: `${slug}-${i}` });
    let res = await create();
    // With REDIS_REPLICA_ACKS a replica that falls behind the wait (a loaded machine) makes it a
    // 503, which leaves no IP behind: tried again, as a client does after Retry-After.
    for (let tries = 1; res.status === 503 && tries < 20; tries++) {
      await sleep(200);
      res = await create();
    }
    if (res.status !== 201) throw new Error(`POST /api/ips: ${res.status} ${JSON.stringify(res.body)}`);
    firstTask.set(res.body.id, res.body.currentCrawl.taskId);
  }
  const ips = [...firstTask.keys()];
  const crawler = startStandInCrawler(ctx);
  const processedPerIp = async () =>
    new Map((await sql<{ ip_id: number; n: number }>('SELECT ip_id, count(*)::int AS n FROM processed_results GROUP BY ip_id')).map((r) => [r.ip_id, r.n]));
  await waitFor(async () => [...(await processedPerIp()).values()].filter((n) => n >= 1).length === IPS, { message: 'the chains did not run' });

  // The work.
  const acked = new Map(sessions.map((s) => [s, [] as string[]]));
  const served: { id: number; source: string; sentAt: number; at: number }[] = [];
  const refused = { messages: 0, pops: 0 };
  const answered = { messages: 0, pops: 0 };
  let lagFrom = Infinity;
  let lagTo = Infinity;
  const lagged = { messages: 0, pops: 0 };
  const ackTimes: number[] = [];
  /** Acknowledged requests sent after the replication link was cut. */
  const afterCut = { messages: 0, pops: 0 };
  let running = true;
  let seq = 0;
  const writer = async (w: number) => {
    for (let i = w; running; i += MESSAGE_WRITERS) {
      const session = sessions[i % sessions.length]!;
      const content = `${session} ${seq++}`;
      const sentAt = Date.now();
      const res = await api.post(`/api/sessions/${session}/messages`, { role: 'user', content }).catch((err: Error) => ({ status: 0, body: err.message }));
      answered.messages++;
      if (res.status === 201) {
        acked.get(session)!.push(content);
        ackTimes.push(Date.now());
        if (sentAt >= lagFrom) afterCut.messages++;
        if (sentAt >= lagFrom && Date.now() <= lagTo) lagged.messages++;
      } else if (res.status === 503) refused.messages++;
      else unexpected.push(`message: ${res.status} ${JSON.stringify(res.body)}`);
      await sleep(2);
    }
  };
  const popper = async () => {
    while (running) {
      const sentAt = Date.now();
      const res = await api.post(`/api/pools/titles/${group}/pop`).catch((err: Error) => ({ status: 0, body: err.message }));
      answered.pops++;
      if (res.status === 200) {
        const body = res.body as { id: number; source: string };
        served.push({ id: body.id, source: body.source, sentAt, at: Date.now() });
        if (sentAt >= lagFrom) afterCut.pops++;
        if (sentAt >= lagFrom && Date.now() <= lagTo) lagged.pops++;
      } else if (res.status === 503) refused.pops++;
      else unexpected.push(`pop: ${res.status} ${JSON.stringify(res.body)}`);
      await sleep(5);
    }
  };
  const loops = [...Array.from({ length: MESSAGE_WRITERS }, (_, w) => writer(w)), ...Array.from({ length: POPPERS }, () => popper())];

  let killedAt = 0;
  let promotionMs = 0;
  try {
    await waitFor(() => answered.messages >= 40 && served.length >= 20, { message: 'the work did not flow' });
    // The replica lags: the master takes (and answers) a few more requests alone, then dies.
    topology.pause(replica);
    await topology.cutReplication(master);
    lagFrom = Date.now();
    try {
      await waitFor(() => afterCut.messages >= 2 && afterCut.pops >= 2, {
        timeoutMs: 10_000,
        intervalMs: 5,
        message: 'no request was acknowledged while the replica lagged',
      });
      await topology.kill(master);
      killedAt = lagTo = Date.now();
    } finally {
      topology.resume(replica);
    }
    const promoted = await topology.promoted(master);
    promotionMs = Date.now() - killedAt;
    if (promoted !== replica) unexpected.push(`the promoted node is ${promoted}, not the replica ${replica}`);
    await topology.rejoin(master);

    // The work goes on: messages and pops answered again, every chain processed twice more.
    const after = await processedPerIp();
    const sinceKill = { messages: ackTimes.filter((at) => at > killedAt).length, pops: served.filter((s) => s.at > killedAt).length };
    await waitFor(
      () => ackTimes.filter((at) => at > killedAt).length >= sinceKill.messages + 20 && served.filter((s) => s.at > killedAt).length >= sinceKill.pops + 10,
      { timeoutMs: 60_000, message: 'messages and pops were not answered again after the failover' },
    ).catch((err: Error) => {
      const warnings = t.lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-15);
      throw new Error(
        `${err.message}: answered ${JSON.stringify(answered)}, refused ${JSON.stringify(refused)}, acknowledged since the kill ${ackTimes.filter((at) => at > killedAt).length} messages and ${served.filter((x) => x.at > killedAt).length} pops; unexpected ${unexpected.slice(0, 5).join(' | ')}; last warnings:\n${warnings.join('\n')}`,
      );
    });
    let behind: number[] = [];
    await waitFor(
      async () => {
        const now = await processedPerIp();
        behind = ips.filter((id) => (now.get(id) ?? 0) < (after.get(id) ?? 0) + 2);
        return behind.length === 0;
      },
      { timeoutMs: 60_000, message: 'not every chain went on after the failover' },
    ).catch(async (err: Error) => {
      const states = await Promise.all(
        behind.map(async (id) => {
          const current = (await ctx.redis.hget(ctx.keys.crawlChain(chainBucket(id)), String(id))) ?? '';
          const crawlQueue = ctx.queues.queue('crawl', id);
          const crawl = await crawlQueue.getJob(current);
          const result = await ctx.queues.queue('crawlResult', id).getJob(`result-${current}`);
          // A delayed crawl: when BullMQ will promote it (its score), to tell a far due time from a worker that stopped promoting.
          const [dueAt] = crawl ? await delayedDueAt(ctx.redis, crawlQueue, [current]) : [null];
          const due = dueAt == null ? '' : ` due in ${dueAt - Date.now()} ms`;
          return `${id}: ${current} crawl ${crawl ? `${await crawl.getState()}${due} attempts ${crawl.attemptsMade}` : 'none'}, result ${result ? `${await result.getState()} ${result.failedReason ?? ''}` : 'none'}, runs ${crawler.runs.get(current) ?? 0}`;
        }),
      );
      const counts = await Promise.all(ctx.queues.all().map(async (q) => `${q.name} ${JSON.stringify(await q.getJobCounts())}`));
      const workers = crawler.worker.workers.map((w) => `${w.name}: running ${w.isRunning()}, paused ${w.isPaused()}`);
      const warnings = t.lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-12);
      throw new Error(
        `${err.message}: IPs ${behind.join(', ')}\n${states.join('\n')}\n${counts.join('\n')}\nstand-in crawl workers: ${workers.join('; ')}\n${warnings.join('\n')}`,
      );
    });
  } finally {
    running = false;
    await Promise.all(loops);
    await crawler.close();
  }
  const resumedMs = (served.find((x) => x.at > killedAt + promotionMs && x.source === 'pool')?.at ?? Date.now()) - killedAt;

  // Quiet: no crawl running, no result waiting for the pipeline, every persist buffer empty.
  const crawlQueues = ctx.queues.everywhere('crawl');
  const resultQueues = ctx.queues.everywhere('crawlResult');
  await waitFor(async () => (await jobsIn(crawlQueues, ['active'])).length === 0 && (await jobsIn(resultQueues, UNFINISHED)).length === 0, {
    timeoutMs: 60_000,
    message: 'results still in flight',
  });
  await waitFor(
    async () => (await Promise.all(Array.from({ length: shards }, (_, s) => ctx.redis.llen(ctx.keys.messagePersistBuffer(s))))).every((n) => n === 0),
    { timeoutMs: 30_000, message: 'the persist buffers did not drain' },
  );

  // Messages: stored (DB) and readable (GET), once the numbers stop changing (a repair may still run).
  const measure = async () => {
    let unreadable = 0;
    let unstored = 0;
    for (const [session, contents] of acked) {
      const rows = await sql<{ content: string }>('SELECT content FROM chat_messages WHERE session_id = $1', [session]);
      const stored = new Set(rows.map((r) => r.content));
      const read = await api.get(`/api/sessions/${session}/messages?limit=1000`);
      if (read.status !== 200) throw new Error(`GET messages: ${read.status}`);
      const readable = new Set((read.body.messages as { content: string }[]).map((m) => m.content));
      unreadable += contents.filter((c) => !readable.has(c)).length;
      unstored += contents.filter((c) => !stored.has(c)).length;
    }
    return { unreadable, unstored };
  };
  let last = await measure();
  let same = 0;
  await waitFor(
    async () => {
      const now = await measure();
      same = now.unreadable === last.unreadable && now.unstored === last.unstored ? same + 1 : 0;
      last = now;
      return (now.unreadable === 0 && now.unstored === 0) || same >= 5;
    },
    { timeoutMs: 30_000, intervalMs: 500, message: 'the message figures did not settle' },
  );

  // Pools: rows served more than once.
  const counts = new Map<number, number>();
  for (const s of served) counts.set(s.id, (counts.get(s.id) ?? 0) + 1);
  const rowsServedTwice = [...counts.values()].filter((n) => n > 1).length;

  // Chains: the processed links are the chain's first k, each once, and the one pending crawl is link k+1.
  const processed = await sql<{ ip_id: number; task_id: string }>('SELECT ip_id, task_id FROM processed_results');
  const pending = await jobsIn(crawlQueues, UNFINISHED);
  const brokenChains: string[] = [];
  for (const id of ips) {
    const done = processed.filter((r) => r.ip_id === id).map((r) => r.task_id);
    const chain = [firstTask.get(id)!];
    while (chain.length < done.length + 1) chain.push(nextTaskId(id, chain.at(-1)!));
    const mine = pending.filter((p) => p.job.data.ipId === id).map((p) => p.job.id);
    const current = (await ctx.redis.hget(ctx.keys.crawlChain(chainBucket(id)), String(id))) ?? undefined;
    if (
      JSON.stringify([...done].sort()) !== JSON.stringify(chain.slice(0, -1).sort()) ||
      mine.length !== 1 ||
      mine[0] !== chain.at(-1) ||
      current !== chain.at(-1)
    )
      brokenChains.push(
        `IP ${id}: processed ${done.length} (${done.join(',')}), pending ${mine.join(',') || 'none'}, chain entry ${current}, expected ${chain.at(-1)}`,
      );
  }
  let deadJobs = 0;
  for (const q of ctx.queues.all()) deadJobs += await q.getFailedCount();

  return {
    mode,
    messagesAcknowledged: [...acked.values()].reduce((n, a) => n + a.length, 0),
    messagesUnreadable: last.unreadable,
    messagesUnstored: last.unstored,
    messagesDuringLag: lagged.messages,
    popsServed: served.length,
    popsDuringLag: lagged.pops,
    rowsServedTwice,
    brokenChains,
    deadJobs,
    refused,
    promotionMs,
    resumedMs,
    unexpected,
  };
}

/** One line of figures for the test output. */
export function describeReport(r: FailoverReport): string {
  return (
    `${r.mode}: messages acknowledged ${r.messagesAcknowledged} (${r.messagesDuringLag} while the replica lagged), ` +
    `unreadable afterwards ${r.messagesUnreadable}, never stored ${r.messagesUnstored}; ` +
    `pops served ${r.popsServed} (${r.popsDuringLag} while the replica lagged), rows served twice ${r.rowsServedTwice}; ` +
    `chains not whole ${r.brokenChains.length}; dead jobs ${r.deadJobs}; refused (503) ${r.refused.messages} messages, ${r.refused.pops} pops; ` +
    `promotion ${r.promotionMs} ms after the kill, first pop served from the pool again after ${r.resumedMs} ms`
  );
}
