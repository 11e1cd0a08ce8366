/**
 * The `crawl` job: crawl, hand the result to the pipeline, return a summary.
 *
 * The result job's id is derived from the task id, so a crawl retried after its result was
 * enqueued (the worker died before completing the job) cannot produce a second result.
 */
import { BlockedError } from '../errors.js';
import type { JobProcessor } from '../queues/create-worker.js';
import type { QueueRegistry } from '../queues/registry.js';
import { crawlTask, type CrawlDeps } from './crawl-task.js';

export interface CrawlSummary {
  taskId: string;
  /** The platform instance (process) that crawled. */
  crawledBy: string;
  items: number;
  pagesCrawled: number;
  errors: number;
}

export const resultJobId = (taskId: string) => `result-${taskId}`;

/** A crawl handed back by a stopping crawler waits this long before another crawler takes it. */
const HAND_BACK_DELAY_MS = 1000;

export function createCrawlProcessor(deps: CrawlDeps & { queues: QueueRegistry; instanceId: string }): JobProcessor<'crawl', CrawlSummary> {
  return async (job, ctx) => {
    const task = job.data;
    let crawled;
    try {
      crawled = await crawlTask(deps, task, ctx.logger);
    } catch (err) {
      // The crawler stopped under this crawl (its grace period ran out and the browsers closed):
      // hand the crawl back without spending an attempt; the next crawler takes it whole.
      if (deps.browsers.stopping) throw new BlockedError('the crawler stopped during this crawl; handed back', HAND_BACK_DELAY_MS, 'shutdown', { cause: err, routine: true });
      throw err;
    }
    // A crawl that ended while the browsers were closing may be missing pages: not a result.
    if (deps.browsers.stopping && crawled.errors.length) throw new BlockedError('the crawler stopped during this crawl; handed back', HAND_BACK_DELAY_MS, 'shutdown', { routine: true });
    const result = { ...crawled, crawledBy: deps.instanceId };
    await deps.queues.add('crawlResult', 'result', result, { jobId: resultJobId(task.taskId) });
    const summary = { taskId: task.taskId, crawledBy: deps.instanceId, items: result.items.length, pagesCrawled: result.pagesCrawled, errors: result.errors.length };
    ctx.logger.info({ ipId: task.ipId, keyword: task.keyword, ...summary }, 'crawl finished');
    return summary;
  };
}
