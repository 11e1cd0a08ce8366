/**
 * Keeps one job scheduler of a role: upserted when the role starts (idempotent across the
 * processes of the role: an unchanged period keeps its next run), then checked every
 * SCHEDULER_CHECK_MS and put back when it is gone (a Redis that lost its data lost it).
 *
 * The check is an in-process timer, a documented exception to "periodic work is a job
 * scheduler": it is the watchdog of the job scheduler itself. A scheduler put back is logged and
 * counted (wp_job_schedulers_recreated_total); a check that fails (Redis down, which the
 * connection already logs) is logged at debug and repeated at the next period.
 */
import type { JobsOptions, Queue } from 'bullmq';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';

export const SCHEDULER_CHECK_MS = 30_000;

export interface KeptScheduler {
  queue: Queue;
  id: string;
  everyMs: number;
  template: { name: string; data: unknown; opts?: JobsOptions };
}

export async function keepJobScheduler(s: KeptScheduler, deps: { metrics: Metrics; logger: Logger }): Promise<() => void> {
  const recreated = deps.metrics.counter(
    'wp_job_schedulers_recreated_total',
    'Job schedulers found missing (a Redis that lost its data) and put back, by queue and scheduler.',
    ['queue', 'scheduler'],
  );
  // With tracing on, each run is a trace of its own, not one more span of a trace that never ends.
  const template = s.queue.opts.telemetry ? { ...s.template, opts: { ...s.template.opts, telemetry: { omitContext: true } } } : s.template;
  const upsert = () => s.queue.upsertJobScheduler(s.id, { every: s.everyMs }, template);
  await upsert();
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    s.queue
      .getJobScheduler(s.id)
      .then(async (existing) => {
        if (existing) return;
        await upsert();
        recreated.inc({ queue: s.queue.name, scheduler: s.id });
        deps.logger.warn({ queue: s.queue.name, scheduler: s.id }, 'job scheduler was missing; put back');
      })
      .catch((err: Error) => deps.logger.debug({ err: err.message, scheduler: s.id }, 'job scheduler check failed; next period retries'))
      .finally(() => (checking = false));
  }, SCHEDULER_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
