/**
 * Scheduling operations on IPs' crawl chains, used by the API (create, trigger, update,
 * delete, replay), the pipeline (closed loop, failures) and reconciliation.
 *
 * A pending crawl is a BullMQ job on queue `crawl` (in its IP's partition: src/queues/layout.ts;
 * lookups also search older layouts being drained) whose id is the task id (delayed until due;
 * the delayed set replaces the reference's schedule ZSET and its precise sleep). Which task holds
 * an IP's chain is kept in CrawlChain; only the holder's job may exist, so each active IP has
 * exactly one crawl pending or running, whatever mix of triggers, retries and restarts.
 *
 * Once taken by a crawler the crawl is the child of a flow whose parent, `result-<taskId>` on
 * `crawl-result`, processes its result (src/crawl/crawl-flow.ts). The parent is what moves the
 * chain on: with the result (process-result.ts) or, when the crawl failed for good, without it
 * (`afterFailure`); a parent that fails for good moves it on too. Every move is `advance` from
 * the task's own id to its derived successor, so each of them may run any number of times.
 */
import type { Job, Queue } from 'bullmq';
import { InvalidStateError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { PENDING_STATES, QUEUED_STATES } from '../queues/job-states.js';
import type { QueueRegistry } from '../queues/registry.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { IpStore } from './ip-store.js';
import type { SchedulingSettings } from './settings.js';
import { CrawlChain, type AdvanceOutcome } from './crawl-chain.js';
import { ipIdOfTask, newTaskId, nextTaskId, resultJobId, taskOfResultJob } from './task-ids.js';

export interface SchedulableIp {
  id: number;
  keyword: string;
}

export type JobState = Awaited<ReturnType<Queue['getJobState']>>;

const IN_FLIGHT: ReadonlySet<string> = new Set([...PENDING_STATES, 'active']);

/** Where the chain link of a task stands. */
export type LinkState =
  | 'pending' // crawl job delayed / waiting / prioritized
  | 'running' // crawl job active
  | 'in_pipeline' // crawl over (done, or failed for good), its flow's parent waiting for or in the pipeline
  | 'finished' // crawl and result both done (or failed): the chain should have moved on
  | 'missing'; // no crawl job, no result: the job was never added (crash) or was deleted

export type CrawlNowStatus = 'queued' | 'moved_forward' | 'already_queued' | 'running';

/** What replaying a dead job of a crawl chain did (see CrawlScheduler.replay). */
export interface ReplayOutcome {
  /** The dead job asked for. */
  jobId: string;
  /**
   * retried: the dead result processing runs again (the crawl's result is still attached);
   * crawl_now: the IP's current crawl (`taskId`) was brought forward to now, the dead crawl removed;
   * ip_inactive / ip_gone: nothing done (the IP is not crawled any more).
   */
  status: 'retried' | 'crawl_now' | 'ip_inactive' | 'ip_gone';
  /** The job that carries the replay: the retried job, or the IP's current crawl. */
  taskId?: string;
  /** For crawl_now: how the current crawl was brought forward (see crawlNow). */
  crawl?: CrawlNowStatus;
}

/** What the scheduler consults of the result pipeline (given by its wiring: crawl scheduling never imports the pipeline). */
export interface PipelineLinks {
  /** The pipeline's record of processed results: whether task `taskId`'s result was counted. */
  results: { wasProcessed(taskId: string): Promise<boolean> };
  /** The IP detail cache: every path that records an IP's next crawl invalidates its cached detail. */
  caches: { invalidateIp(ipId: number): Promise<void> };
}

export interface SchedulerDeps extends PipelineLinks {
  queues: QueueRegistry;
  redis: RedisClient;
  keys: Keys;
  ips: IpStore;
  settings: SchedulingSettings;
  logger: Logger;
}

/** A crawl as the API shows it: `finishing` when its job is gone (removed on completion) but its chain has not moved yet. */
export interface CrawlView {
  taskId: string;
  state: string;
  dueAt?: string;
}

/** IP detail caches invalidated at once when many IPs' next crawls are recorded together. */
const INVALIDATE_CHUNK = 100;

export class CrawlScheduler {
  readonly chain: CrawlChain;

  constructor(private readonly deps: SchedulerDeps) {
    this.chain = new CrawlChain(deps.redis, deps.keys, deps.queues.replicaAck);
  }

  /** Every crawl queue: the current partitions, then those of older layouts being drained. */
  queues(): Queue[] {
    return this.deps.queues.everywhere('crawl');
  }

  /** The crawl queue holding task `taskId` (its IP's partition, current layout first), else where it would be added. */
  private crawlQueueOf(taskId: string): Promise<Queue> {
    return this.deps.queues.home('crawl', ipIdOfTask(taskId), taskId);
  }

  /** Adds the crawl job of a chain link (a no-op when a job with this id exists). */
  async addCrawlJob(ip: SchedulableIp, taskId: string, dueAt: number): Promise<void> {
    const { pagesOnSale, pagesSold } = this.deps.settings;
    await this.deps.queues.add(
      'crawl',
      'crawl',
      { ipId: ip.id, keyword: ip.keyword, taskId, pagesOnSale, pagesSold },
      { jobId: taskId, delay: Math.max(0, Math.round(dueAt - Date.now())) },
      ip.id,
    );
  }

  /**
   * Gives every IP without a chain its first crawl at its due time (but at least `minDelayMs`
   * from when it is added). IPs that already have one keep it. Returns the IPs newly scheduled,
   * with their task ids.
   */
  async scheduleMany(
    ips: readonly (SchedulableIp & { dueAt: number })[],
    options: { minDelayMs?: number; signal?: AbortSignal } = {},
  ): Promise<Map<number, string>> {
    const claimed = new Map<number, string>();
    const chunk = 1000;
    for (let i = 0; i < ips.length && !options.signal?.aborted; i += chunk) {
      const part = ips.slice(i, i + chunk);
      const result = await this.chain.claim(part.map((ip) => ({ ipId: ip.id, taskId: newTaskId(ip.id) })));
      const jobs = part.flatMap((ip) => {
        const r = result.get(ip.id)!;
        if (!r.claimed) return [];
        claimed.set(ip.id, r.taskId);
        const { pagesOnSale, pagesSold } = this.deps.settings;
        return [
          {
            name: 'crawl',
            data: { ipId: ip.id, keyword: ip.keyword, taskId: r.taskId, pagesOnSale, pagesSold },
            opts: { jobId: r.taskId, delay: Math.max(options.minDelayMs ?? 0, Math.round(ip.dueAt - Date.now())) },
            partitionKey: ip.id,
          },
        ];
      });
      if (jobs.length) await this.deps.queues.addBulk('crawl', jobs);
    }
    if (claimed.size) await this.recordNextCrawl(ips.filter((ip) => claimed.has(ip.id)).map((ip) => ({ ipId: ip.id, dueAt: ip.dueAt })));
    return claimed;
  }

  /**
   * Closed loop: task `from` of this IP is over (result processed, or the crawl failed for
   * good); its successor is scheduled at `dueAt`. Idempotent per `from`.
   */
  async advance(ip: SchedulableIp, from: string, dueAt: number): Promise<AdvanceOutcome & { next: string }> {
    const next = nextTaskId(ip.id, from);
    const outcome = await this.chain.advance(ip.id, from, next);
    if (outcome.kind === 'advanced') {
      await this.addCrawlJob(ip, next, dueAt);
      // A result can outrun its own crawl job's bookkeeping (a crawler that re-runs a stalled
      // job whose result is already in): a still-pending `from` would be a second crawl.
      await this.removeIfPending(from);
    } else if (outcome.kind === 'already') {
      // A previous run moved the chain on and may have died before adding the job.
      if ((await this.linkState(next)) === 'missing') await this.addCrawlJob(ip, next, dueAt);
    }
    return { ...outcome, next };
  }

  /**
   * Where the chain link of `taskId` stands, from the crawl job, its flow's parent and the DB. A
   * crawl that failed for good is still in the pipeline while its parent has not run (the parent
   * is what moves the chain on after a failure).
   */
  async linkState(taskId: string): Promise<LinkState> {
    const state = await (await this.crawlQueueOf(taskId)).getJobState(taskId);
    if (PENDING_STATES.has(state)) return 'pending';
    if (state === 'active') return 'running';
    const resultId = resultJobId(taskId);
    const resultState = await (await this.deps.queues.home('crawlResult', ipIdOfTask(taskId), resultId)).getJobState(resultId);
    if (IN_FLIGHT.has(resultState)) return 'in_pipeline';
    if (state === 'completed' || state === 'failed' || resultState === 'completed' || resultState === 'failed') return 'finished';
    return (await this.deps.results.wasProcessed(taskId)) ? 'finished' : 'missing';
  }

  /**
   * Makes the chain of an active IP whole again: a link whose job went missing is re-added
   * under the same id; a finished link (its failure or result event was missed) is advanced.
   * Returns what was done.
   */
  async repair(ip: SchedulableIp, taskId: string, dueAt: number): Promise<'ok' | 're-added' | 'advanced'> {
    const state = await this.linkState(taskId);
    if (state === 'missing') {
      if ((await this.chain.current(ip.id)) !== taskId) return 'ok';
      await this.addCrawlJob(ip, taskId, dueAt);
      await this.recordNextCrawl([{ ipId: ip.id, dueAt }]);
      return 're-added';
    }
    if (state === 'finished') {
      const r = await this.advance(ip, taskId, dueAt);
      if (r.kind === 'advanced') await this.recordNextCrawl([{ ipId: ip.id, dueAt }]);
      return r.kind === 'advanced' ? 'advanced' : 'ok';
    }
    return 'ok';
  }

  /**
   * Manual trigger: the IP's pending crawl is moved forward to now; a crawl that is already
   * waiting or running is reused. Never adds a second crawl. A crawl queued or moved forward is
   * recorded as the IP's next crawl (now), whoever asked (the API, a dead crawl's replay).
   */
  async crawlNow(ip: SchedulableIp): Promise<{ taskId: string; status: CrawlNowStatus }> {
    const outcome = await this.bringForward(ip);
    if (outcome.status === 'queued' || outcome.status === 'moved_forward') await this.recordNextCrawl([{ ipId: ip.id, dueAt: Date.now() }]);
    return outcome;
  }

  private async bringForward(ip: SchedulableIp): Promise<{ taskId: string; status: CrawlNowStatus }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const taskId = await this.chain.current(ip.id);
      if (!taskId) {
        const claimed = (await this.chain.claim([{ ipId: ip.id, taskId: newTaskId(ip.id) }])).get(ip.id)!;
        if (!claimed.claimed) continue;
        await this.addCrawlJob(ip, claimed.taskId, Date.now());
        return { taskId: claimed.taskId, status: 'queued' };
      }
      const queue = await this.crawlQueueOf(taskId);
      const state = await queue.getJobState(taskId);
      if (state === 'delayed') {
        const job = await queue.getJob(taskId);
        // In the caller's trace: a crawl run now is the caller's (QueueRegistry.promote).
        const moved =
          job &&
          (await this.deps.queues.promote(queue, job).then(
            () => true,
            () => false,
          ));
        if (moved) return { taskId, status: 'moved_forward' };
        continue; // it was promoted or taken meanwhile: look again
      }
      if (QUEUED_STATES.has(state)) return { taskId, status: 'already_queued' };
      if (state === 'active') return { taskId, status: 'running' };
      if (state === 'failed') {
        // Failed for good; its flow's parent would move the chain on at the interval: move it on
        // now instead, due now (the parent's later advance from the same task finds it done).
        const r = await this.advance(ip, taskId, Date.now());
        if (r.kind === 'advanced') return { taskId: r.next, status: 'queued' };
        continue;
      }
      const link = await this.linkState(taskId);
      if (link === 'in_pipeline') return { taskId, status: 'running' };
      if (link === 'missing') {
        await this.addCrawlJob(ip, taskId, Date.now());
        return { taskId, status: 'queued' };
      }
      if (link === 'finished') await this.advance(ip, taskId, Date.now());
    }
    throw new Error(`could not settle the crawl chain of IP ${ip.id}`);
  }

  /**
   * Task `taskId` ended without a result: its crawl failed for good (or was removed), or its
   * result could not be processed. When it is still its IP's current link, the IP's next crawl is
   * scheduled at its interval (the successor's id is derived, so this may run any number of times,
   * also after the result was processed). Returns the successor when the chain moved on now.
   */
  async afterFailure(taskId: string): Promise<{ advanced: boolean; next?: string }> {
    const ipId = ipIdOfTask(taskId);
    if (ipId === undefined) return { advanced: false };
    const ip = await this.deps.ips.find(ipId);
    if (!ip?.active) return { advanced: false };
    const dueAt = Date.now() + ip.intervalSeconds * 1000;
    const r = await this.advance(ip, taskId, dueAt);
    if (r.kind !== 'advanced') return { advanced: false };
    await this.recordNextCrawl([{ ipId, dueAt }]);
    this.deps.logger.info({ ipId, taskId, next: r.next }, 'crawl task ended without a result; IP rescheduled at its interval');
    return { advanced: true, next: r.next };
  }

  /**
   * Replays a dead job of a crawl chain (the dead-job console) so that it rejoins its chain,
   * never as a second pending crawl of its IP:
   *   - `result-T` (its processing failed for good): retried with its attempts reset. The crawl's
   *     result is still attached to it, so the browser does not run again; the result is counted
   *     once (processed_results), and the chain advance from T finds the chain already at T's
   *     successor (scheduled when it failed), so no crawl is added.
   *   - crawl `T` (failed for good): retrying T itself would crawl a link whose failure was
   *     processed (or is about to be), beside the successor. Instead the IP's current crawl runs
   *     now (crawlNow: a chain still at T advances to T's successor due now; a pending successor
   *     is promoted; a queued or running one is reused). The dead job then leaves the failed set.
   * Throws when `jobId` is not a failed job of `crawl` or `crawl-result`.
   */
  async replay(queue: 'crawl' | 'crawl-result', jobId: string): Promise<ReplayOutcome> {
    const taskId = queue === 'crawl' ? jobId : taskOfResultJob(jobId);
    const ipId = taskId === undefined ? undefined : ipIdOfTask(taskId);
    const q = await this.deps.queues.home(queue === 'crawl' ? 'crawl' : 'crawlResult', ipId, jobId);
    const job = await q.getJob(jobId);
    const state = job ? await job.getState() : 'unknown';
    if (!job || state !== 'failed') throw new Error(`job "${jobId}" of queue "${queue}" is ${state === 'unknown' ? 'not there' : state}, not failed`);
    if (taskId === undefined || ipId === undefined) throw new Error(`job "${jobId}" is not part of a crawl chain`);
    const ip = await this.deps.ips.find(ipId);
    if (!ip) return { jobId, status: 'ip_gone' };
    if (!ip.active) return { jobId, status: 'ip_inactive' };
    if (queue === 'crawl-result') {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return { jobId, status: 'retried', taskId: jobId };
    }
    const current = await this.crawlNow(ip);
    await job.remove().catch(() => undefined);
    return { jobId, status: 'crawl_now', taskId: current.taskId, crawl: current.status };
  }

  /**
   * An operator runs a delayed crawl now (Bull Board's promote, the job console): when it is its
   * IP's current link the IP crawls now through crawlNow, recorded as its next crawl. A delayed
   * crawl that is not (an orphan the reconciliation removes: its IP moved on, or stopped) is
   * refused rather than run beside the chain.
   */
  async promote(taskId: string): Promise<{ status: CrawlNowStatus; taskId: string }> {
    const ipId = ipIdOfTask(taskId);
    const ip = ipId === undefined ? undefined : await this.deps.ips.find(ipId);
    if (!ip?.active || (await this.chain.current(ip.id)) !== taskId)
      throw new InvalidStateError(
        'not_in_chain',
        `crawl "${taskId}" is not its IP's current crawl; the reconciliation removes it (POST /api/ips/:id/crawl crawls an IP now)`,
        {
          field: 'id',
        },
      );
    return this.crawlNow(ip);
  }

  /** Stops an IP's crawls: its chain entry goes, and its pending job with it (a running one finishes, unscheduled). */
  async unschedule(ipId: number): Promise<string | undefined> {
    const taskId = await this.chain.release(ipId);
    if (taskId) await this.removeIfPending(taskId);
    return taskId;
  }

  /** Removes a crawl job if it is still pending (never an active one). */
  async removeIfPending(taskId: string): Promise<boolean> {
    const queue = await this.crawlQueueOf(taskId);
    const state = await queue.getJobState(taskId);
    if (!PENDING_STATES.has(state)) return false;
    return (await queue.remove(taskId).catch(() => 0)) === 1;
  }

  /** Moves the IP's pending (delayed) crawl to a new due time, e.g. after a weight change. */
  async moveDue(ipId: number, dueAt: number): Promise<boolean> {
    const job = await this.pendingJob(ipId);
    if (!job || (await job.getState()) !== 'delayed') return false;
    return job.changeDelay(Math.max(0, Math.round(dueAt - Date.now()))).then(
      () => true,
      () => false,
    );
  }

  /** Keeps the pending crawl's payload in step with an IP's new keyword. */
  async updateKeyword(ipId: number, keyword: string): Promise<void> {
    const job = await this.pendingJob(ipId);
    if (job && PENDING_STATES.has(await job.getState())) await job.updateData({ ...job.data, keyword }).catch(() => undefined);
  }

  /** The IP's current crawl: task id, state and (when delayed) its due time. */
  /** The IP's current link: its task id, the job's state, and when it is due while delayed. */
  async currentCrawl(ipId: number): Promise<CrawlView | null> {
    const taskId = await this.chain.current(ipId);
    return taskId ? this.crawlView(taskId) : null;
  }

  /** One crawl task's view (as currentCrawl), whether or not it is still its IP's current link. */
  async crawlView(taskId: string): Promise<CrawlView> {
    const queue = await this.crawlQueueOf(taskId);
    const state = await queue.getJobState(taskId);
    let dueAt: string | undefined;
    if (state === 'delayed') {
      const score = await this.deps.redis.zscore(queue.keys.delayed!, taskId);
      if (score !== null) dueAt = new Date(Math.floor(Number(score) / 0x1000)).toISOString();
    }
    return { taskId, state: state === 'unknown' ? 'finishing' : state, ...(dueAt ? { dueAt } : {}) };
  }

  /**
   * Records the IPs' next crawls (ips.next_crawl_at; informational, the job's delay is the truth)
   * and invalidates their cached details, so that no path that moves a chain (a result, a crawl
   * that failed for good, a trigger, a replay, the reconciliation) leaves GET /api/ips/:id stale
   * for the cache's TTL.
   */
  async recordNextCrawl(entries: readonly { ipId: number; dueAt: number }[]): Promise<void> {
    await this.deps.ips.recordNextCrawl(entries);
    for (let i = 0; i < entries.length; i += INVALIDATE_CHUNK) {
      await Promise.all(entries.slice(i, i + INVALIDATE_CHUNK).map((e) => this.deps.caches.invalidateIp(e.ipId)));
    }
  }

  private async pendingJob(ipId: number): Promise<Job | undefined> {
    const taskId = await this.chain.current(ipId);
    return taskId ? (await this.crawlQueueOf(taskId)).getJob(taskId) : undefined;
  }
}
