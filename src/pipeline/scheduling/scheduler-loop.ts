/**
 * The scheduler's singleton work, run by the leader only (ctx.leadership.whileLeader):
 *
 *   - at start, then every SCHEDULER_RECONCILE_INTERVAL: reconciliation (reconcile.ts);
 *   - every SCHEDULER_TICK_MS: backpressure (backpressure.ts): crawls due within the next two
 *     ticks beyond SCHEDULER_BACKPRESSURE_THRESHOLD waiting jobs are pushed back a little;
 *   - final failures: a crawl that exhausted its attempts (or a result that could not be
 *     processed) is in the failed set; the chain of its IP advances so the IP keeps being
 *     crawled. Heard through QueueEvents 'failed' on `crawl` and `crawl-result`; an event
 *     missed while no leader listened is found by the next reconciliation.
 *
 * Stopping is idempotent: the listeners close, the timer stops, a running tick is awaited.
 */
import { Job, QueueEvents } from 'bullmq';
import type { Database } from '../../db/client.js';
import type { Logger } from '../../logging/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { isRedisConnectionError, type RedisClient } from '../../redis/connection.js';
import type { RedisConnections } from '../../redis/connections.js';
import type { Keys } from '../../redis/keys.js';
import type { PipelineSettings } from '../settings.js';
import { planBackpressure, type DueCrawl } from './backpressure.js';
import type { CrawlScheduler } from './crawl-scheduler.js';
import { reconcile } from './reconcile.js';
import { ipIdOfTask, taskOfResultJob } from './task-ids.js';

export interface SchedulerLoopDeps {
  scheduler: CrawlScheduler;
  db: Database;
  redis: RedisClient;
  connections: RedisConnections;
  keys: Keys;
  settings: PipelineSettings;
  metrics: Metrics;
  logger: Logger;
}

/** The most held-back crawls handled in one tick; more stay for the next ticks. */
const MAX_HOLD_BACK_PER_TICK = 5000;

/** The loop's metrics; the role registers them at start too, so followers export them as 0. */
export function schedulerMetrics(metrics: Metrics) {
  return {
    heldBack: metrics.counter('wp_scheduler_held_back_total', 'Due crawls pushed back by backpressure.'),
    reconciled: metrics.counter('wp_scheduler_reconciled_total', 'Changes made by reconciliation, by action.', ['action']),
    finalFailures: metrics.counter('wp_scheduler_final_failures_total', 'Crawls or results that failed for good; their IP was rescheduled.', ['queue']),
  };
}

export class SchedulerLoop {
  private tickTimer: NodeJS.Timeout | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private reconciling: Promise<void> | undefined;
  private listeners: QueueEvents[] = [];
  private stopping: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly logger: Logger;
  private readonly heldBack;
  private readonly reconciled;
  private readonly finalFailures;

  constructor(private readonly deps: SchedulerLoopDeps) {
    this.logger = deps.logger.child({ component: 'crawl-scheduler' });
    ({ heldBack: this.heldBack, reconciled: this.reconciled, finalFailures: this.finalFailures } = schedulerMetrics(deps.metrics));
  }

  /**
   * Starts the listeners, the backpressure ticks and the reconciliations. Ticks do not wait for
   * a reconciliation: one that schedules 100,000 IPs takes a while, and the crawls it adds must
   * be held back meanwhile (each is added at least one tick ahead, so a tick sees it first).
   * Resolves after the start-up reconciliation (a failed one is retried on the next tick).
   */
  async start(): Promise<void> {
    this.listen('crawl');
    this.listen('crawl-result');
    this.tickLoop();
    await this.reconcileLoop();
  }

  /** One reconciliation now, then old processed-result ids are dropped. */
  async reconcileNow() {
    const { scheduler, db, redis, settings } = this.deps;
    const report = await reconcile({ scheduler, db, redis, logger: this.logger, spreadSeconds: settings.spreadSeconds, leadMs: settings.tickMs, signal: this.abort.signal });
    for (const action of ['scheduled', 'reAdded', 'advanced', 'orphansRemoved', 'released'] as const) {
      if (report[action]) this.reconciled.inc({ action }, report[action]);
    }
    await this.dropOldProcessedResults();
    return report;
  }

  /** processed_results only has to outlive any re-delivery; it is trimmed in bounded batches. */
  private async dropOldProcessedResults(): Promise<void> {
    const before = new Date(Date.now() - this.deps.settings.processedRetentionDays * 86_400_000);
    for (let round = 0; round < 100 && !this.abort.signal.aborted; round++) {
      const { rowCount } = await this.deps.db.pool.query(
        `DELETE FROM processed_results WHERE task_id IN (SELECT task_id FROM processed_results WHERE processed_at < $1 LIMIT 10000)`,
        [before],
      );
      if (!rowCount || rowCount < 10_000) return;
    }
  }

  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      this.abort.abort();
      for (const t of [this.tickTimer, this.reconcileTimer]) if (t) clearTimeout(t);
      await Promise.all([this.ticking, this.reconciling].map((p) => p?.catch(() => undefined)));
      await Promise.all(this.listeners.map((l) => l.close().catch(() => undefined)));
    })());
  }

  private tickLoop(): void {
    if (this.stopping) return;
    this.tickTimer = setTimeout(() => {
      this.ticking = this.applyBackpressure()
        .then(() => undefined, (err: Error) => this.logger.warn({ err: err.message }, 'backpressure tick failed; next tick retries'))
        .finally(() => this.tickLoop());
    }, this.deps.settings.tickMs);
  }

  private async reconcileLoop(): Promise<void> {
    if (this.stopping) return;
    let ok = true;
    this.reconciling = this.reconcileNow().then(
      () => undefined,
      (err: Error) => {
        ok = false;
        this.logger.warn({ err: err.message }, 'reconciliation failed; retrying soon');
      },
    );
    await this.reconciling;
    if (this.stopping) return;
    const { reconcileIntervalSeconds, tickMs } = this.deps.settings;
    this.reconcileTimer = setTimeout(() => void this.reconcileLoop(), ok ? reconcileIntervalSeconds * 1000 : Math.max(tickMs, 1000));
  }

  /** Holds back due crawls beyond the threshold (see backpressure.ts). */
  async applyBackpressure(): Promise<number> {
    const { scheduler, redis, settings } = this.deps;
    const queue = scheduler.queue;
    const now = Date.now();
    const lookAheadMs = settings.tickMs * 2;
    const counts = await queue.getJobCounts('waiting', 'prioritized');
    const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
    const limit = Math.max(0, settings.backpressureThreshold - waiting) + MAX_HOLD_BACK_PER_TICK;
    const raw = await redis.zrangebyscore(queue.keys.delayed!, 0, (now + lookAheadMs + 1) * 0x1000 - 1, 'WITHSCORES', 'LIMIT', 0, limit);
    const due: DueCrawl[] = [];
    for (let i = 0; i < raw.length; i += 2) due.push({ jobId: raw[i]!, dueAt: Math.floor(Number(raw[i + 1]) / 0x1000) });
    const plan = planBackpressure({
      now,
      waiting,
      due,
      threshold: settings.backpressureThreshold,
      batchSize: settings.batchSize,
      lookAheadMs,
      slotMs: settings.tickMs / Math.max(1, Math.min(settings.batchSize, settings.backpressureThreshold)),
    });
    if (!plan.holdBack.length) return 0;
    const results = await Promise.all(
      plan.holdBack.map((h) =>
        new Job(queue, 'crawl', {}, {}, h.jobId).changeDelay(Math.max(0, h.dueAt - Date.now())).then(
          () => 1,
          () => 0, // promoted or removed meanwhile
        ),
      ),
    );
    const held = results.reduce<number>((a, b) => a + b, 0);
    this.heldBack.inc(held);
    this.logger.debug({ waiting, due: due.length, released: plan.release, heldBack: held }, 'backpressure: due crawls held back');
    return held;
  }

  private listen(queueName: 'crawl' | 'crawl-result'): void {
    const events = new QueueEvents(queueName, {
      connection: this.deps.connections.create('bullmq', `events:${queueName}:scheduler`),
      prefix: this.deps.keys.bullPrefix,
    });
    events.on('error', (err) => (isRedisConnectionError(err) ? undefined : this.logger.warn({ err: err.message, queue: queueName }, 'queue events error')));
    events.on('failed', ({ jobId }) => {
      const taskId = queueName === 'crawl' ? jobId : taskOfResultJob(jobId);
      if (!taskId) return;
      this.onFinalFailure(queueName, taskId).catch((err: Error) =>
        this.logger.warn({ err: err.message, taskId }, 'could not reschedule after a final failure; reconciliation will'),
      );
    });
    this.listeners.push(events);
  }

  private async onFinalFailure(queueName: string, taskId: string): Promise<void> {
    const ipId = ipIdOfTask(taskId);
    if (ipId === undefined) return;
    const ip = await this.deps.db.prisma.ip.findUnique({ where: { id: ipId } });
    if (!ip?.active) return;
    const dueAt = Date.now() + ip.intervalSeconds * 1000;
    const r = await this.deps.scheduler.advance(ip, taskId, dueAt);
    if (r.kind === 'advanced') {
      await this.deps.scheduler.recordNextCrawl([{ ipId, dueAt }]);
      this.finalFailures.inc({ queue: queueName });
      this.logger.info({ ipId, taskId, next: r.next, queue: queueName }, 'failed for good; IP rescheduled at its interval');
    }
  }
}
