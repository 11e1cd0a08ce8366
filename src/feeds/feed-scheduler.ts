/**
 * Scheduling of feed refreshes on the `feed-refresh` queue (docs/feeds.md#one-pending-refresh-per-feed).
 *
 * Invariant: every feed has exactly one periodic chain, i.e. at any moment exactly one job of
 * its chain exists in a pending state (delayed / waiting / prioritized) or is running (active);
 * and at most one manual refresh is pending beside it.
 *
 * How: BullMQ deduplication. Every periodic job of feed F (trigger "initial", then "periodic")
 * carries deduplication id `feed-F-periodic` with `keepLastIfActive`; manual refreshes carry
 * `feed-F-manual`. BullMQ keeps the key `<queue>:de:<id>` (in the feed's partition:
 * src/queues/layout.ts) pointing at the job that owns it and deletes it, atomically, when that job
 * completes or finally fails. The states of a chain, as seen by `schedulePeriodic`:
 *
 *   no key            → the job is created (the chain starts, or restarts after a repair)
 *   key → pending job → nothing is created; with `reschedule` a *delayed* job is moved to the
 *                       new delay (interval change, a manual refresh just ran)
 *   key → active job  → nothing is created now; the request is stored as that job's successor
 *                       and BullMQ creates it in the same script that finishes the active job
 *                       (a later request overwrites the stored one: still one successor)
 *
 * `ensureChain` (the reconciler) creates a job only when the key is missing or names a job that is
 * finished or gone (a job that died of too many stalls keeps its key: dropped by compare-and-delete).
 *
 * Priorities (lower runs first): manual 1, initial 2, periodic 3; a job that holds a place in its
 * domain's line runs at 0 (BullMQ's plain wait list, before every prioritized job): its turn is a
 * reserved moment of a shared resource. This changes only when a job runs, never how many exist.
 */
import { randomUUID } from 'node:crypto';
import type { Job, JobsOptions, Queue } from 'bullmq';
import type { Config } from '../config/index.js';
import type { RedisClient } from '../redis/connection.js';
import { PENDING_STATES } from '../queues/job-states.js';
import type { QueueRegistry } from '../queues/registry.js';
import type { FeedRefreshPayload } from '../queues/declarations/feeds.js';
import type { DomainGate, HandOver } from './domain-gate.js';
import { dueAtOfScore } from '../queues/delayed-due.js';
import { deleteIfEquals } from '../redis/delete-if-equals.js';

export type RefreshTrigger = FeedRefreshPayload['trigger'];

export const REFRESH_PRIORITY: Record<RefreshTrigger, number> = { manual: 1, initial: 2, periodic: 3 };
/** The custom backoff type of refresh jobs (see backoffStrategy in role.ts). */
export const FEED_BACKOFF = 'feed-refresh';

/** A delayed job due later than its domain turn plus this is waiting for its schedule, not its turn. */
const TURN_TOLERANCE_MS = 5_000;

export interface ScheduledTask {
  taskId: string;
  /** False when an existing job took the request (deduplicated). */
  created: boolean;
}

export interface TaskState {
  state: string;
  /** When a delayed job becomes due. */
  runAt: Date | null;
}

/** A feed's periodic chain as the reconciler reads it (chainStates). */
export type ChainState = 'live' | 'none' | 'dead';

export function periodicDedupId(feedId: number): string {
  return `feed-${feedId}-periodic`;
}

export function manualDedupId(feedId: number): string {
  return `feed-${feedId}-manual`;
}

/** The feed of a refresh job id (`feed-<feedId>-<uuid>`), or undefined for any other id. */
export function feedIdOfJob(jobId: string): number | undefined {
  const m = /^feed-(\d+)-/.exec(jobId);
  return m ? Number(m[1]) : undefined;
}

export class FeedScheduler {
  constructor(
    private readonly deps: {
      queues: QueueRegistry;
      redis: RedisClient;
      gate: DomainGate;
      settings: Pick<Config['feeds'], 'attempts' | 'retryDelayMs' | 'resultTtlSeconds'>;
    },
  ) {}

  /**
   * The queues that may hold the feed's jobs: its partition (by feed id) of the current layout,
   * then its partitions of older layouts being drained (QUEUE_SHARDS, src/queues/layout.ts).
   */
  queuesOf(feedId: number): Queue[] {
    return this.deps.queues.candidates('feedRefresh', feedId);
  }

  /** The queue holding refresh job `jobId` (the feed id is in the id), else the feed's current partition. */
  queueOfJob(jobId: string): Promise<Queue> {
    return this.deps.queues.home('feedRefresh', feedIdOfJob(jobId), jobId);
  }

  /**
   * Where a job of this chain goes: the queue whose deduplication key names a pending job of the
   * chain (an older layout still holds the chain's pending job: deduplication must see it), else
   * the feed's partition of the current layout. An older layout's active owner does not hold the
   * chain back: its successor is created in the current layout, so chains move on as they run.
   */
  private async placement(feedId: number, dedupId: string): Promise<Queue> {
    const [current, ...older] = this.queuesOf(feedId);
    for (const q of older) {
      const owner = await q.getDeduplicationJobId(dedupId);
      if (owner && PENDING_STATES.has(await q.getJobState(owner))) return q;
    }
    return current!;
  }

  private options(feedId: number, trigger: RefreshTrigger, delayMs: number, deduplication: JobsOptions['deduplication']): JobsOptions {
    const { attempts, retryDelayMs, resultTtlSeconds } = this.deps.settings;
    return {
      jobId: `feed-${feedId}-${randomUUID()}`,
      priority: REFRESH_PRIORITY[trigger],
      delay: Math.max(0, Math.round(delayMs)),
      attempts,
      backoff: { type: FEED_BACKOFF, delay: retryDelayMs },
      removeOnComplete: { age: resultTtlSeconds },
      deduplication,
    };
  }

  /**
   * Adds the job. A refresh due now whose domain is known takes its place in the domain's line
   * as it is queued (not when rescheduling a pending one): when the domain is busy, it is queued
   * delayed until its turn and at priority 0, like any job that waited for its turn, so that a
   * burst of refreshes for one domain wakes each job once, at its turn, instead of waking them
   * all to find the domain busy. A place reserved for a job that was not created (an existing job
   * took the request) is given back.
   */
  private async add(feedId: number, trigger: RefreshTrigger, domain: string | undefined, opts: JobsOptions): Promise<ScheduledTask> {
    const jobId = opts.jobId!;
    const reserve = domain !== undefined && opts.delay === 0 && !opts.deduplication?.reschedule;
    const wait = reserve ? await this.deps.gate.reserve(domain, jobId) : 0;
    const data = this.deps.queues.validate('feedRefresh', { feedId, trigger, ...(domain ? { domain } : {}) } satisfies FeedRefreshPayload);
    const queue = await this.placement(feedId, opts.deduplication!.id);
    const job: Job = await this.deps.queues.confirmed(queue, () =>
      queue.add(`refresh-${trigger}`, data, wait > 0 ? { ...opts, delay: wait, priority: 0 } : opts),
    );
    const created = job.id === jobId;
    if (reserve && !created) await this.handOver(domain, await this.deps.gate.cancel(domain, jobId));
    return { taskId: job.id!, created };
  }

  /**
   * Asks for the feed's periodic refresh in `delayMs` (see the states above). `domain`, when the
   * caller knows the feed's URL, travels in the job (see the payload).
   */
  schedulePeriodic(
    feedId: number,
    delayMs: number,
    options: { trigger?: 'initial' | 'periodic'; reschedule?: boolean; domain?: string | undefined } = {},
  ): Promise<ScheduledTask> {
    const trigger = options.trigger ?? 'periodic';
    return this.add(
      feedId,
      trigger,
      options.domain,
      this.options(feedId, trigger, delayMs, { id: periodicDedupId(feedId), keepLastIfActive: true, ...(options.reschedule ? { reschedule: true } : {}) }),
    );
  }

  /** A manual refresh now, ahead of periodic work; a pending manual refresh is reused. */
  scheduleManual(feedId: number, domain?: string): Promise<ScheduledTask> {
    return this.add(feedId, 'manual', domain, this.options(feedId, 'manual', 0, { id: manualDedupId(feedId) }));
  }

  /** State of a task and, when delayed, when it is due. */
  async describe(taskId: string): Promise<TaskState> {
    const queue = await this.queueOfJob(taskId);
    const state = await queue.getJobState(taskId);
    if (state !== 'delayed') return { state, runAt: null };
    const dueAt = await this.delayedUntil(queue, taskId);
    return { state, runAt: dueAt === null ? null : new Date(dueAt) };
  }

  /** When a delayed job is due (ms since the epoch), or null when it is not in the delayed set. */
  private async delayedUntil(queue: Queue, jobId: string): Promise<number | null> {
    const score = await this.deps.redis.zscore(queue.keys.delayed!, jobId);
    return score === null ? null : dueAtOfScore(score);
  }

  /**
   * Moves a job waiting for its domain's turn to that turn, at `at` (ms since the epoch; the
   * domain gate's hand-over). A job that is no longer delayed is left alone; a job delayed until
   * well after the turn is waiting for its schedule, not for the domain, and keeps its time.
   * Returns 'dropped' when the job should leave the domain's line (it does not exist any more,
   * or waits for its schedule; it reserves a new place when it runs).
   */
  async moveToTurn(jobId: string, at: number): Promise<'moved' | 'left' | 'dropped'> {
    const queue = await this.queueOfJob(jobId);
    const dueAt = await this.delayedUntil(queue, jobId);
    if (dueAt === null) return (await queue.getJobState(jobId)) === 'unknown' ? 'dropped' : 'left';
    if (dueAt > at + TURN_TOLERANCE_MS) return 'dropped';
    const job = await queue.getJob(jobId);
    if (!job) return 'dropped';
    try {
      await job.changeDelay(Math.max(0, at - Date.now()));
      return 'moved';
    } catch {
      return 'left'; // promoted or taken meanwhile: its own turn check decides
    }
  }

  /**
   * The domain gate's hand-over: the job first in line is moved to its turn. A job that is gone,
   * or waits for its schedule rather than its turn, leaves the line, and the next one gets the turn.
   */
  async handOver(domain: string, handOver: HandOver | undefined): Promise<void> {
    for (let next = handOver; next; ) {
      const moved = await this.moveToTurn(next.jobId, next.at).catch(() => 'left' as const);
      if (moved !== 'dropped') return;
      next = await this.deps.gate.cancel(domain, next.jobId);
    }
  }

  /** The job currently owning the feed's periodic chain (pending or active), if any. */
  async periodicTask(feedId: number): Promise<string | null> {
    for (const q of this.queuesOf(feedId)) {
      const owner = await q.getDeduplicationJobId(periodicDedupId(feedId));
      if (owner) return owner;
    }
    return null;
  }

  /**
   * Where the periodic chain of each feed stands, for a page of feeds at once (the reconciler's
   * check): `live` when a partition's deduplication key names a pending or active job, `none` when
   * no partition has the key, `dead` when a key names a job that finished or is gone. Two round
   * trips for the page (the keys, then the owners' states), not two per feed. A reading, not a
   * decision: ensureChain and startChains check again as they write.
   */
  async chainStates(feedIds: readonly number[]): Promise<Map<number, ChainState>> {
    const lookups = feedIds.flatMap((feedId) => this.queuesOf(feedId).map((queue) => ({ feedId, queue })));
    const owners = await Promise.all(lookups.map((l) => l.queue.getDeduplicationJobId(periodicDedupId(l.feedId))));
    const states = await Promise.all(lookups.map((l, i) => (owners[i] ? l.queue.getJobState(owners[i]) : undefined)));
    const out = new Map<number, ChainState>(feedIds.map((id) => [id, 'none']));
    lookups.forEach((l, i) => {
      const state = states[i];
      if (state === undefined || out.get(l.feedId) === 'live') return;
      out.set(l.feedId, state === 'active' || PENDING_STATES.has(state) ? 'live' : 'dead');
    });
    return out;
  }

  /**
   * Starts the periodic chain of feeds that have none (chainStates said `none`), in one addBulk
   * per partition: each job carries its chain's deduplication id, so a chain started meanwhile by
   * anyone else keeps its one job and this one is not created. Returns how many were created.
   */
  async startChains(entries: readonly { feedId: number; delayMs: number }[]): Promise<number> {
    if (!entries.length) return 0;
    const jobs = entries.map(({ feedId, delayMs }) => ({
      name: 'refresh-periodic',
      data: { feedId, trigger: 'periodic' as const },
      opts: this.options(feedId, 'periodic', delayMs, { id: periodicDedupId(feedId), keepLastIfActive: true }),
      partitionKey: feedId,
    }));
    const added = await this.deps.queues.addBulk('feedRefresh', jobs);
    const requested = new Set(jobs.map((j) => j.opts.jobId));
    return added.filter((job) => requested.has(job.id)).length;
  }

  /**
   * Makes sure the feed's chain exists: creates the periodic job in `delayMs` when the chain's
   * key is missing, or names a job that finished or is gone. Returns true when it created one.
   */
  async ensureChain(feedId: number, delayMs: number): Promise<boolean> {
    const dedupId = periodicDedupId(feedId);
    for (const queue of this.queuesOf(feedId)) {
      const owner = await queue.getDeduplicationJobId(dedupId);
      if (!owner) continue;
      const state = await queue.getJobState(owner);
      if (state === 'active' || PENDING_STATES.has(state)) return false;
      await deleteIfEquals(this.deps.redis, queue.toKey(`de:${dedupId}`), owner);
    }
    return (await this.schedulePeriodic(feedId, delayMs)).created;
  }

  /** Removes the feed's pending refreshes (periodic and manual) and a running one's successor. */
  async unschedule(feedId: number): Promise<void> {
    for (const queue of this.queuesOf(feedId)) await this.unscheduleIn(queue, feedId);
  }

  private async unscheduleIn(queue: Queue, feedId: number): Promise<void> {
    for (const dedupId of [periodicDedupId(feedId), manualDedupId(feedId)]) {
      const owner = await queue.getDeduplicationJobId(dedupId);
      // A running job's stored successor must not be created.
      await this.deps.redis.del(queue.toKey(`dn:${dedupId}`));
      if (!owner) continue;
      const job = await queue.getJob(owner);
      if (!job) {
        await deleteIfEquals(this.deps.redis, queue.toKey(`de:${dedupId}`), owner);
        continue;
      }
      const state = await job.getState();
      if (PENDING_STATES.has(state)) {
        // Removing the job drops its deduplication key; a job that just became active is left
        // to find the feed gone.
        await job.remove().catch(() => undefined);
      } else if (state !== 'active') {
        await deleteIfEquals(this.deps.redis, queue.toKey(`de:${dedupId}`), owner);
      }
    }
  }
}
