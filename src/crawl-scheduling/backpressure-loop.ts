/**
 * Backpressure, run by the leader of the `crawl-scheduler` singleton task: every SCHEDULER_TICK_MS it looks
 * two ticks ahead for due crawls and holds back those beyond SCHEDULER_BACKPRESSURE_THRESHOLD
 * waiting crawls (backpressure.ts), before BullMQ promotes them by itself.
 *
 * The one periodic piece of the crawl scheduler that is not a job scheduler on the `maintenance`
 * queue (a documented exception): it must act within a tick (1 s by default, down to 50 ms) of a
 * crawl falling due, every tick, which a job per tick (86,400 a day, each queued behind the other
 * maintenance work) would not do. Instead each round is reported as metrics
 * (wp_scheduler_backpressure_rounds_total{outcome}, wp_scheduler_backpressure_round_seconds,
 * wp_scheduler_held_back_total); the next round retries a failed one. Failures are logged as an
 * outage (lib/outage-log.ts): once when rounds begin to fail, once when one succeeds again or the
 * term ends (with how many failed), not once a tick (a minute of Redis outage was 60 warnings a
 * process).
 *
 * It runs in the leader's term (startTermLoop): every round checks `term.isCurrent()` first, so a
 * leader resumed after a pause past its lease runs no further round, and the loop stops when the
 * term ends.
 */
import { Job, type Queue } from 'bullmq';
import { toError } from '../errors.js';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisClient } from '../redis/connection.js';
import type { LeaderTerm } from '../coordination/leadership.js';
import { startTermLoop } from '../coordination/term-loop.js';
import type { SchedulingSettings } from './settings.js';
import { planBackpressure, type DueCrawl } from './backpressure.js';
import type { CrawlScheduler } from './crawl-scheduler.js';
import { schedulerMetrics } from './scheduler-metrics.js';

export interface BackpressureDeps {
  scheduler: CrawlScheduler;
  redis: RedisClient;
  settings: SchedulingSettings;
  metrics: Metrics;
  logger: Logger;
}

/** The most held-back crawls handled in one round; more stay for the next rounds. */
const MAX_HOLD_BACK_PER_TICK = 5000;

/** Holds back due crawls beyond the threshold (see backpressure.ts). One round. */
async function applyBackpressure(
  deps: Pick<BackpressureDeps, 'scheduler' | 'redis' | 'settings'>,
): Promise<{ waiting: number; due: number; released: number; heldBack: number }> {
  const { scheduler, redis, settings } = deps;
  const queues = scheduler.queues();
  const now = Date.now();
  const lookAheadMs = settings.tickMs * 2;
  // Every partition (and older layout) counts: the threshold is on crawls waiting anywhere.
  const counts = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'prioritized')));
  const waiting = counts.reduce((n, c) => n + (c.waiting ?? 0) + (c.prioritized ?? 0), 0);
  const limit = Math.max(0, settings.backpressureThreshold - waiting) + MAX_HOLD_BACK_PER_TICK;
  const queueOfJob = new Map<string, Queue>();
  const due: DueCrawl[] = [];
  for (const queue of queues) {
    const raw = await redis.zrangebyscore(queue.keys.delayed!, 0, (now + lookAheadMs + 1) * 0x1000 - 1, 'WITHSCORES', 'LIMIT', 0, limit);
    for (let i = 0; i < raw.length; i += 2) {
      due.push({ jobId: raw[i]!, dueAt: Math.floor(Number(raw[i + 1]) / 0x1000) });
      queueOfJob.set(raw[i]!, queue);
    }
  }
  due.sort((a, b) => a.dueAt - b.dueAt);
  due.splice(limit);
  const plan = planBackpressure({
    now,
    waiting,
    due,
    threshold: settings.backpressureThreshold,
    batchSize: settings.batchSize,
    lookAheadMs,
    slotMs: settings.tickMs / Math.max(1, Math.min(settings.batchSize, settings.backpressureThreshold)),
  });
  if (!plan.holdBack.length) return { waiting, due: due.length, released: plan.release, heldBack: 0 };
  const results = await Promise.all(
    plan.holdBack.map((h) =>
      new Job(queueOfJob.get(h.jobId)!, 'crawl', {}, {}, h.jobId).changeDelay(Math.max(0, h.dueAt - Date.now())).then(
        () => 1,
        () => 0, // promoted or removed meanwhile
      ),
    ),
  );
  return { waiting, due: due.length, released: plan.release, heldBack: results.reduce<number>((a, b) => a + b, 0) };
}

/** Starts the rounds for one leader term; the returned function stops them (awaiting a round in progress). */
export function startBackpressureLoop(deps: BackpressureDeps, term: LeaderTerm): () => Promise<void> {
  const logger = deps.logger.child({ component: 'crawl-scheduler', term: term.token });
  const m = schedulerMetrics(deps.metrics);
  const failures = new OutageLog<unknown>({
    began: (err) =>
      logger.warn({ err: toError(err).message }, 'backpressure round failed; the next rounds retry (logged again when one succeeds or the term ends)'),
    ended: (failedRounds) => logger.info({ failedRounds }, 'backpressure rounds succeed again'),
  });
  const stop = startTermLoop(
    term,
    deps.settings.tickMs,
    async () => {
      const started = performance.now();
      try {
        const round = await applyBackpressure(deps);
        failures.success();
        m.rounds.inc({ outcome: 'ok' });
        m.heldBack.inc(round.heldBack);
        logger.debug({ ...round, ms: Math.round(performance.now() - started) }, 'backpressure round');
      } catch (err) {
        m.rounds.inc({ outcome: 'failed' });
        throw err;
      } finally {
        m.roundSeconds.observe((performance.now() - started) / 1000);
      }
    },
    (err) => failures.failure(err),
  );
  return async () => {
    await stop();
    // The term ended while its rounds failed (its lease lost to the outage, or a stop): no round
    // of it will succeed to close the outage's log, so this does.
    if (failures.isDown) logger.info({ failedRounds: failures.failures }, 'backpressure rounds end with the term, still failing');
  };
}
