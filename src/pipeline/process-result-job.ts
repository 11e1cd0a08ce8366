/**
 * The processor of `crawl-result` jobs. Such a job is the parent of a crawl's flow (its data is
 * the ids; the result is the crawl's return value, src/crawl/crawl-flow.ts), or a result
 * delivered in the job itself (no platform code adds one: test/cluster-mode and bench:cluster do,
 * to feed chosen results through the worker without a browser; the console refuses hand-added
 * jobs on this queue).
 *
 *   the crawl returned a result   → the result pipeline (process-result.ts), which moves the
 *                                   chain on to the next crawl at the computed interval
 *   it did not (failed for good:  → the IP's next crawl at its interval (CrawlScheduler.afterFailure)
 *   an ignored dependency, or
 *   it was removed)
 *   this processing fails for     → the same, before the job lands among the dead jobs; a retry
 *   good (invalid result, or its    or a replay of the dead job reads the attached result again
 *   last attempt)                   and counts it once (processed_results), the browser never re-runs
 *
 * A stalled job that fails for good (BullMQ fails it without running this) is found by the next
 * reconciliation, which moves its chain on.
 */
import { PermanentError } from '../errors.js';
import type { JobProcessor } from '../queues/create-worker.js';
import { crawlResultJobPayload, crawlResultPayload } from '../queues/payloads/crawl.js';
import type { ResultOutcome, ResultPipeline } from './process-result.js';
import type { CrawlScheduler } from '../crawl-scheduling/crawl-scheduler.js';

export interface ResultJobDeps {
  pipeline: ResultPipeline;
  scheduler: CrawlScheduler;
  /** A task's chain moved on without its result (metrics: which queue's failure it was). */
  onRescheduled?: (queue: 'crawl' | 'crawl-result') => void;
  /** A crawl ended without a result (metrics). */
  onNoResult?: () => void;
}

/** The crawl's result: from the job itself, else from its crawl child; else why there is none. */
async function resultOf(job: Parameters<JobProcessor<'crawlResult'>>[0]): Promise<{ result: unknown } | { failure: string }> {
  if ('items' in job.data) return { result: job.data };
  const values = Object.values(await job.getChildrenValues());
  if (values.length) return { result: values[0] };
  const failures = Object.values(await job.getIgnoredChildrenFailures());
  return { failure: failures[0] ?? 'the crawl was removed before it ended' };
}

export function createResultJobProcessor(deps: ResultJobDeps): JobProcessor<'crawlResult', ResultOutcome> {
  return async (job) => {
    const ref = crawlResultJobPayload.safeParse(job.data);
    if (!ref.success) {
      const issue = ref.error.issues[0]!;
      throw new PermanentError(`invalid crawl-result job: ${issue.path.join('.')}: ${issue.message}`, 'invalid_payload');
    }
    const { ipId, taskId } = ref.data;
    try {
      const found = await resultOf(job);
      if ('failure' in found) {
        deps.onNoResult?.();
        await job.log(`crawl ${taskId} ended without a result (${found.failure.slice(0, 300)}); the IP's next crawl is scheduled at its interval`);
        const moved = await deps.scheduler.afterFailure(taskId);
        if (moved.advanced) deps.onRescheduled?.('crawl');
        return { taskId, ipId, status: 'crawl_failed', items: 0, reason: found.failure.slice(0, 500), nextTaskId: moved.next ?? null };
      }
      const parsed = crawlResultPayload.safeParse(found.result);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new PermanentError(`invalid crawl result: ${issue.path.join('.')}: ${issue.message}`, 'invalid_payload');
      }
      const outcome = await deps.pipeline.process(parsed.data);
      await job.log(describe(outcome));
      return outcome;
    } catch (err) {
      const final = err instanceof PermanentError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (final) {
        const moved = await deps.scheduler.afterFailure(taskId).catch(() => ({ advanced: false }));
        if (moved.advanced) deps.onRescheduled?.('crawl-result');
      }
      throw err;
    }
  };
}

function describe(o: ResultOutcome): string {
  const next = o.nextTaskId ? `; next crawl ${o.nextTaskId} at ${o.nextCrawlAt}` : '';
  if (o.status === 'processed' && o.baseline) return `first crawl of IP ${o.ipId}: ${o.items} items recorded as its baseline (nothing counted)${next}`;
  if (o.status === 'processed')
    return `${o.items} items: inflow ${o.inflow}, outflow ${o.outflow}, alerts ${o.alerts?.length ? o.alerts.join(', ') : 'none'}, weight ${o.weight}${next}`;
  if (o.status === 'duplicate') return `already counted; follow-up steps replayed${next}`;
  return `IP ${o.ipId} is gone: nothing counted, nothing scheduled`;
}
