/**
 * Reading and acting on jobs across the registered queues: counts by state, job lists, retry,
 * delete, pause and resume, jobs added by an operator, the dead-job console (the failed set of
 * every queue: filter, search, page, replay or remove by filter), and task lookup by id.
 *
 * Replays: a replayed job gets its full attempts again. A queue whose jobs form a chain (one
 * pending crawl per IP, one pending refresh per feed) registers a replay handler, so that the
 * replayed job takes its place in the chain instead of becoming a second pending job; other
 * queues' jobs are simply retried. A completed job of a chain is not retried (it would run a
 * finished link again: a crawl that fails as stale, a second pending refresh): its domain's route
 * runs the chain now. A chain may register a promote handler too, which runs a delayed job now
 * through its chain. Every way in (the REST console, Bull Board's buttons) goes through these.
 */
import type { Job, JobType, Queue } from 'bullmq';
import { ConflictError, InvalidInputError, InvalidStateError, NotFoundError, toError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { delayedDueAt } from './delayed-due.js';
import { findQueueKey, type QueueKey, queues as queueDefinitions } from './definitions.js';
import { FAMILY_OF, partitionKeyOfPayload, type QueueFamily } from './layout.js';
import type { QueueRegistry } from './registry.js';

/** Log lines of a task shown by GET /api/tasks/:id (the newest ones). */
export const TASK_LOG_LINES = 20;

export interface TaskView {
  task_id: string;
  queue: string;
  state: string;
  result?: unknown;
  failedReason?: string;
  attemptsMade: number;
  /** The processor's last progress report (0 when none). */
  progress: unknown;
  /** The newest log lines, oldest first. */
  logs: string[];
  /** Log lines kept for the job (all of them: Bull Board shows them in its Logs tab). */
  logCount: number;
}

export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface JobView {
  id: string;
  queue: string;
  name: string;
  state?: string;
  data: unknown;
  attemptsMade: number;
  attempts: number;
  failedReason?: string;
  stacktrace?: string[];
  returnValue?: unknown;
  createdAt: string;
  processedAt?: string;
  finishedAt?: string;
  delayUntil?: string;
  priority: number;
}

function iso(ms: number | undefined): string | undefined {
  return ms ? new Date(ms).toISOString() : undefined;
}

export function viewJob(queue: string, job: Job, state?: string): JobView {
  return {
    id: job.id!,
    queue,
    name: job.name,
    ...(state ? { state } : {}),
    data: job.data,
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    ...(job.stacktrace?.length ? { stacktrace: job.stacktrace } : {}),
    ...(job.returnvalue !== undefined && job.returnvalue !== null ? { returnValue: job.returnvalue } : {}),
    createdAt: iso(job.timestamp)!,
    ...(job.processedOn ? { processedAt: iso(job.processedOn) } : {}),
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
    priority: job.priority ?? 0,
  };
}

/** A dead job in the console's listings: no stack trace (the single-job view has it). */
export interface DeadJobEntry {
  id: string;
  queue: string;
  name: string;
  failedReason?: string;
  attemptsMade: number;
  attempts: number;
  createdAt: string;
  finishedAt?: string;
  data: unknown;
}

export interface DeadJobFilter {
  /** One queue's dead jobs only. */
  queue?: string;
  /** Case-insensitive text to find in the job's id, name or failure reason. */
  q?: string;
}

/** Where a replay put a job's work: its chain's status and the task that carries it on. */
export interface ChainReplay {
  status: string;
  taskId?: string;
}

/** Puts a failed job back into its chain, with its full attempts (see the header). */
export type ReplayHandler = (job: Job) => Promise<ChainReplay>;

/** Runs a delayed job of a chain now, through its chain (see the header). */
export type PromoteHandler = (job: Job) => Promise<ChainReplay>;

export interface JobInspectorDeps {
  queues: QueueRegistry;
  /** For reads BullMQ has no getter for (due times, the failed set with scores). */
  redis: RedisClient;
  /** Replay handlers by queue name. */
  replay?: ReadonlyMap<string, ReplayHandler>;
  /** Promote handlers by queue name. */
  promote?: ReadonlyMap<string, PromoteHandler>;
}

/** Jobs read per pipelined batch while searching the failed sets. */
const SCAN_BATCH = 500;

/** Options of a replayed job: its attempts start over. */
export const REPLAY = { resetAttemptsMade: true, resetAttemptsStarted: true } as const;

function deadEntry(queue: string, job: Job): DeadJobEntry {
  return {
    id: job.id!,
    queue,
    name: job.name,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    createdAt: iso(job.timestamp)!,
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
    data: job.data,
  };
}

/**
 * The names BullMQ gives a queue's own keys (`<prefix>:<queue>:<name>`, bullmq's QueueKeys), which
 * share the key space of job ids (`<prefix>:<queue>:<id>`): a job id equal to one of them would name
 * the queue's own data (`meta`: its settings and pause flag), never a job.
 */
const BULLMQ_KEY_NAMES = new Set([
  '',
  'active',
  'wait',
  'waiting-children',
  'paused',
  'id',
  'delayed',
  'prioritized',
  'stalled-check',
  'completed',
  'failed',
  'stalled',
  'repeat',
  'limiter',
  'meta',
  'events',
  'pc',
  'marker',
  'de',
]);

/**
 * A job by an id from outside, or undefined. Only a key that holds a job is one: an id naming
 * one of BullMQ's own keys, a key of another type (WRONGTYPE: lists, sets, streams, locks) or a
 * hash that is not a job (no name or timestamp, e.g. a `<job>:processed` hash) is no job.
 */
export async function findJob(q: Queue, id: string): Promise<Job | undefined> {
  if (BULLMQ_KEY_NAMES.has(id)) return undefined;
  let job: Job | undefined;
  try {
    job = await q.getJob(id);
  } catch (err) {
    if (toError(err).message.startsWith('WRONGTYPE')) return undefined;
    throw err;
  }
  if (!job || typeof job.name !== 'string' || !job.timestamp) return undefined;
  return job;
}

/** One queue's job counts in GET /api/queues. */
export interface QueueCounts {
  name: string;
  counts: Record<string, number>;
  paused: boolean;
  /** With partitions (QUEUE_SHARDS > 1, or an older layout draining): the queue family, and each partition's counts. */
  family?: QueueFamily;
  partitions?: { name: string; counts: Record<string, number>; paused: boolean }[];
}

export class JobInspector {
  private readonly queues: QueueRegistry;

  constructor(private readonly deps: JobInspectorDeps) {
    this.queues = deps.queues;
  }

  private queueOr404(name: string): Queue {
    const q = this.queues.byName(name);
    if (q) return q;
    const all = this.resolve(name);
    if (all) throw new NotFoundError('partitioned_queue', `"${name}" has partitions: name one of ${all.map((x) => x.name).join(', ')}`, { field: 'name' });
    throw new NotFoundError('unknown_queue', `no queue named "${name}"`, { field: 'name' });
  }

  /** The queues a name stands for: a registered queue's name, all of its queues (`crawl`: every partition, older layouts' too); a partition's name (`crawl.3-of-6`), that one. */
  private resolve(name: string): Queue[] | undefined {
    // A registered queue's name means all of its queues, also when one of them carries that name
    // (one partition now, partitions of an older layout still draining).
    const key = findQueueKey(name);
    if (key) return this.queues.everywhere(key);
    const q = this.queues.byName(name);
    return q ? [q] : undefined;
  }

  private resolveOr400(name: string): Queue[] {
    const qs = this.resolve(name);
    if (!qs) throw new InvalidInputError('unknown_queue', `no queue named "${name}"`, { field: 'queue' });
    return qs;
  }

  /** The registered queue a (partition) queue belongs to: `crawl` for `crawl.3-of-6`. */
  private familyName(q: Queue): string {
    return queueDefinitions[this.queues.targetOf(q).key].name;
  }

  /** For a queue whose jobs form a chain, what schedules its work the right way; undefined for other queues. */
  private chainRule(q: Queue): string | undefined {
    return queueDefinitions[this.queues.targetOf(q).key].manualAdd?.refused;
  }

  private async jobOr404(q: Queue, id: string): Promise<Job> {
    const job = await findJob(q, id);
    if (!job) throw new NotFoundError('unknown_job', `no job "${id}" in queue "${q.name}"`, { field: 'id' });
    return job;
  }

  /**
   * Every registered queue with its job counts. A partitioned queue (QUEUE_SHARDS) answers the sum
   * over its partitions, with `partitions` listing each one (older layouts being drained included);
   * it is paused when every partition is.
   */
  async counts(): Promise<QueueCounts[]> {
    const one = async (q: Queue) => ({ name: q.name, counts: await q.getJobCounts(...JOB_STATES), paused: await q.isPaused() });
    return Promise.all(
      (Object.keys(queueDefinitions) as QueueKey[]).map(async (key) => {
        const qs = this.queues.everywhere(key);
        const parts = await Promise.all(qs.map(one));
        if (parts.length === 1) return { ...parts[0]!, name: queueDefinitions[key].name };
        const counts: Record<string, number> = {};
        for (const p of parts) for (const [state, n] of Object.entries(p.counts)) counts[state] = (counts[state] ?? 0) + n;
        return { name: queueDefinitions[key].name, family: FAMILY_OF[key], counts, paused: parts.every((p) => p.paused), partitions: parts };
      }),
    );
  }

  async list(name: string, state: JobState, start: number, end: number): Promise<{ queue: string; state: string; total: number; jobs: JobView[] }> {
    const q = this.queueOr404(name);
    const [found, total] = await Promise.all([
      q.getJobs([state as JobType], start, end, state !== 'completed' && state !== 'failed'),
      q.getJobCountByTypes(state as JobType),
    ]);
    const jobs = found.filter(Boolean);
    const views = jobs.map((j) => viewJob(name, j, state));
    if (state === 'delayed') await this.addDueTimes(q, views);
    return { queue: name, state, total, jobs: views };
  }

  async get(name: string, id: string): Promise<JobView> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const view = viewJob(name, job, await job.getState());
    if (view.state === 'delayed') await this.addDueTimes(q, [view]);
    return view;
  }

  /** delayUntil of delayed jobs, from the delayed set (right for moved and retried jobs too). */
  private async addDueTimes(q: Queue, views: JobView[]): Promise<void> {
    const due = await delayedDueAt(
      this.deps.redis,
      q,
      views.map((v) => v.id),
    );
    views.forEach((v, i) => {
      const at = due[i];
      if (at !== null && at !== undefined) v.delayUntil = iso(at)!;
    });
  }

  /** Stops (or lets again) every worker of the queue take jobs; jobs keep their places. */
  async setPaused(name: string, paused: boolean): Promise<{ queue: string; paused: boolean }> {
    const qs = this.resolve(name);
    if (!qs) this.queueOr404(name);
    await Promise.all(qs!.map((q) => (paused ? q.pause() : q.resume())));
    return { queue: name, paused: (await Promise.all(qs!.map((q) => q.isPaused()))).every(Boolean) };
  }

  /**
   * A job added by an operator, its data checked against the queue's payload schema (400 naming
   * the field). A queue whose jobs belong to a chain refuses (409): a hand-made job would be a
   * second pending crawl or refresh; its domain's route schedules one the right way.
   */
  async add(name: string, input: { name?: string | undefined; data: unknown; delay?: number | undefined; priority?: number | undefined }): Promise<JobView> {
    const qs = this.resolve(name);
    if (!qs) this.queueOr404(name);
    const key = this.queues.targetOf(qs![0]!).key;
    const def = queueDefinitions[key];
    if (def.manualAdd) throw new ConflictError('chained_queue', `jobs of "${name}" belong to a chain: ${def.manualAdd.refused}`, { field: 'name' });
    const parsed = def.payload.safeParse(input.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new InvalidInputError('invalid_payload', issue.message, { field: ['data', ...issue.path.map(String)].join('.') });
    }
    // A partitioned queue takes the job in the partition of its business key, whichever was named.
    const job = await this.queues.add(
      key,
      input.name ?? def.name,
      parsed.data as never,
      {
        ...(input.delay ? { delay: input.delay } : {}),
        ...(input.priority ? { priority: input.priority } : {}),
      },
      partitionKeyOfPayload(key, parsed.data),
    );
    return viewJob(job.queueName, job, input.delay ? 'delayed' : input.priority ? 'prioritized' : 'waiting');
  }

  /**
   * Retries a failed (or completed) job; answers where it is now (no stack trace, no data). A job
   * of a chain is replayed through its chain (`chain`: what became of it; the dead job itself may
   * be gone, its work carried on by `chain.taskId`).
   */
  async retry(
    name: string,
    id: string,
  ): Promise<{ id: string; queue: string; name: string; state: string; attemptsMade: number; attempts: number; chain?: ChainReplay }> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const state = await job.getState();
    if (state !== 'failed' && state !== 'completed') {
      throw new InvalidStateError('not_retryable', `job "${id}" is ${state}; only failed or completed jobs can be retried`, { field: 'id' });
    }
    const rule = state === 'completed' ? this.chainRule(q) : undefined;
    if (rule) throw new InvalidStateError('finished_link', `job "${id}" is completed, a finished link of its chain: ${rule}`, { field: 'id' });
    const handler = state === 'failed' ? this.deps.replay?.get(this.familyName(q)) : undefined;
    const chain = handler ? await handler(job) : undefined;
    if (!handler) await job.retry(state, REPLAY);
    const now = await findJob(q, id);
    return {
      id,
      queue: name,
      name: job.name,
      state: now ? await now.getState() : 'replaced',
      attemptsMade: now?.attemptsMade ?? 0,
      attempts: (now ?? job).opts.attempts ?? 1,
      ...(chain ? { chain } : {}),
    };
  }

  /**
   * Runs a delayed job now: a job of a chain through its chain's promote handler (`chain`: the task
   * that runs now), another job is promoted. Only a delayed job can be (409 `not_delayed`).
   */
  async promote(name: string, id: string): Promise<{ id: string; queue: string; state: string; chain?: ChainReplay }> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const state = await job.getState();
    if (state !== 'delayed') throw new InvalidStateError('not_delayed', `job "${id}" is ${state}; only a delayed job can be promoted`, { field: 'id' });
    const handler = this.deps.promote?.get(this.familyName(q));
    const chain = handler ? await handler(job) : undefined;
    if (!handler) await job.promote();
    return { id, queue: name, state: await q.getJobState(id), ...(chain ? { chain } : {}) };
  }

  /**
   * Runs every delayed job of a queue now (one partition, or every queue of a registered name).
   * Jobs of a chain go through its promote handler one by one: only those delayed when this
   * started (a crawl run now schedules its successor, delayed, which stays where it is); jobs that
   * moved meanwhile or that the handler refused are skipped.
   */
  async promoteAll(name: string): Promise<{ queue: string; promoted: number; skipped: number }> {
    const qs = this.resolve(name);
    if (!qs) this.queueOr404(name);
    let promoted = 0;
    let skipped = 0;
    for (const q of qs!) {
      const handler = this.deps.promote?.get(this.familyName(q));
      const ids = (await this.deps.redis.zrevrange(q.keys.delayed!, 0, -1)).reverse(); // soonest due first
      if (!handler) {
        await q.promoteJobs();
        promoted += ids.length;
        continue;
      }
      for (const id of ids) {
        try {
          const job = await findJob(q, id);
          if (!job || (await job.getState()) !== 'delayed') throw new Error('no longer delayed');
          await handler(job);
          promoted++;
        } catch {
          skipped++;
        }
      }
    }
    return { queue: name, promoted, skipped };
  }

  async remove(name: string, id: string): Promise<void> {
    const q = this.queueOr404(name);
    const job = await this.jobOr404(q, id);
    const state = await job.getState();
    if (state === 'active') throw new InvalidStateError('job_active', `job "${id}" is running; it cannot be deleted now`, { field: 'id' });
    await job.remove();
  }

  /** Replays every failed job of a queue (the dead-job console's replay, for one queue). */
  async retryFailed(name: string): Promise<{ queue: string; retried: number }> {
    if (!this.resolve(name)) this.queueOr404(name);
    const { retried } = await this.replayDead({ queue: name });
    return { queue: name, retried };
  }

  /**
   * The dead-job console: failed jobs of every queue (or of `filter.queue`), newest first, those
   * whose id, name or failure reason contains `filter.q`, from `offset`; `total` counts every
   * match. Without `q` only the newest `offset + limit` of each failed set are read; with it every
   * failed job's name and reason are read, in pipelined batches.
   */
  async deadJobs(filter: DeadJobFilter, offset: number, limit: number): Promise<{ total: number; offset: number; limit: number; jobs: DeadJobEntry[] }> {
    const { total, matches } = await this.matchDead(filter, filter.q ? Infinity : offset + limit);
    const page = matches.slice(offset, offset + limit);
    const jobs = await Promise.all(page.map(async (m) => ({ m, job: await findJob(m.queue, m.id) })));
    return { total, offset, limit, jobs: jobs.flatMap(({ m, job }) => (job ? [deadEntry(m.queue.name, job)] : [])) };
  }

  /** Replays every dead job the filter matches; jobs gone or moved meanwhile are skipped. */
  async replayDead(filter: DeadJobFilter): Promise<{ retried: number; skipped: number }> {
    let retried = 0;
    let skipped = 0;
    for (const m of (await this.matchDead(filter, Infinity)).matches) {
      const job = await findJob(m.queue, m.id);
      try {
        if (!job || (await job.getState()) !== 'failed') throw new Error('no longer failed');
        const handler = this.deps.replay?.get(this.familyName(m.queue));
        if (handler) await handler(job);
        else await job.retry('failed', REPLAY);
        retried++;
      } catch {
        skipped++;
      }
    }
    return { retried, skipped };
  }

  /** Removes every dead job the filter matches. */
  async removeDead(filter: DeadJobFilter): Promise<{ removed: number; skipped: number }> {
    let removed = 0;
    let skipped = 0;
    for (const m of (await this.matchDead(filter, Infinity)).matches) {
      const job = await findJob(m.queue, m.id);
      try {
        if (!job || (await job.getState()) !== 'failed') throw new Error('no longer failed');
        await job.remove();
        removed++;
      } catch {
        skipped++;
      }
    }
    return { removed, skipped };
  }

  /** Matching dead jobs, newest first (at most `take` when there is no text to search). */
  private async matchDead(filter: DeadJobFilter, take: number): Promise<{ total: number; matches: { queue: Queue; id: string; failedAt: number }[] }> {
    const qs = filter.queue !== undefined ? this.resolveOr400(filter.queue) : this.queues.all();
    const needle = filter.q?.toLowerCase();
    const redis = this.deps.redis;
    let total = 0;
    const matches: { queue: Queue; id: string; failedAt: number }[] = [];
    for (const q of qs) {
      const failedKey = q.keys.failed!;
      const stop = Number.isFinite(take) ? take - 1 : -1;
      const [flat, count] = await Promise.all([redis.zrevrange(failedKey, 0, stop, 'WITHSCORES'), redis.zcard(failedKey)]);
      const entries: { id: string; failedAt: number }[] = [];
      for (let k = 0; k < flat.length; k += 2) entries.push({ id: flat[k]!, failedAt: Number(flat[k + 1]) });
      if (!needle) {
        total += count;
        for (const e of entries) matches.push({ queue: q, ...e });
        continue;
      }
      for (let k = 0; k < entries.length; k += SCAN_BATCH) {
        const batch = entries.slice(k, k + SCAN_BATCH);
        const fields = await Promise.all(batch.map((e) => redis.hmget(q.toKey(e.id), 'name', 'failedReason')));
        batch.forEach((e, n) => {
          const [name, reason] = fields[n]!;
          if ([e.id, name ?? '', reason ?? ''].some((text) => text.toLowerCase().includes(needle))) {
            total++;
            matches.push({ queue: q, ...e });
          }
        });
      }
    }
    matches.sort((a, b) => b.failedAt - a.failedAt);
    return { total, matches: Number.isFinite(take) ? matches.slice(0, take) : matches };
  }

  /**
   * A task by id, looked up in every queue: its state, result or failure, attempts, its progress
   * (what the processor reported last, e.g. a crawl's pages and items) and its last
   * TASK_LOG_LINES log lines, oldest first (`logCount` says how many it wrote, up to the
   * KEEP_LOG_LINES kept). `visible` (default: all) decides whether the caller may see it, and a
   * task it may not see is answered like a missing one (404).
   *
   * `queueName` limits the lookup to one queue. Ids BullMQ numbers itself (jobs added without an
   * id: by hand, drains, refills) start at 1 in every queue, so one id may name a job in several
   * queues: then the caller must say which (409 `ambiguous_task` naming them), never a guess.
   */
  async task(id: string, visible: (queue: string, job: Job) => boolean | Promise<boolean> = () => true, queueName?: string): Promise<TaskView> {
    const candidates = queueName !== undefined ? this.resolveOr400(queueName) : this.queues.all();
    const looked = await Promise.all(
      candidates.map(async (q) => {
        const job = await findJob(q, id);
        return job && (await visible(this.familyName(q), job)) ? { q, job } : undefined;
      }),
    );
    const found = looked.filter((f): f is { q: Queue; job: Job } => f !== undefined);
    if (found.length > 1) {
      const names = found.map((f) => f.q.name);
      throw new ConflictError('ambiguous_task', `"${id}" names a job in ${names.length} queues (${names.join(', ')}): ask again with ?queue=<name>`, {
        field: 'queue',
      });
    }
    if (found.length === 1) {
      const { q } = found[0]!;
      let { job } = found[0]!;
      const state = await job.getState();
      // A job that finished between the two reads was read as it was before; once finished it
      // no longer changes, so read it again to answer its result with its final state.
      if ((state === 'completed' || state === 'failed') && !job.finishedOn) job = (await findJob(q, id)) ?? job;
      const logs = await q.getJobLogs(id, 0, TASK_LOG_LINES - 1, false);
      return {
        task_id: id,
        queue: q.name,
        state,
        ...(state === 'completed' ? { result: job.returnvalue } : {}),
        ...(job.failedReason ? { failedReason: job.failedReason } : {}),
        attemptsMade: job.attemptsMade,
        progress: job.progress ?? 0,
        logs: [...logs.logs].reverse(),
        logCount: logs.count,
      };
    }
    throw new NotFoundError('unknown_task', `no task "${id}" (finished tasks are kept for JOB_KEEP_COMPLETED_SECONDS)`, { field: 'task_id' });
  }
}
