/**
 * The `crawl` job: crawl, hand the result to the pipeline, return a summary.
 *
 * The result job's id is derived from the task id, so a crawl retried after its result was
 * enqueued (the worker died before completing the job) cannot produce a second result.
 */
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

export function createCrawlProcessor(deps: CrawlDeps & { queues: QueueRegistry; instanceId: string }): JobProcessor<'crawl', CrawlSummary> {
  return async (job, ctx) => {
    const task = job.data;
    const result = { ...(await crawlTask(deps, task, ctx.logger)), crawledBy: deps.instanceId };
    await deps.queues.add('crawlResult', 'result', result, { jobId: resultJobId(task.taskId) });
    const summary = { taskId: task.taskId, crawledBy: deps.instanceId, items: result.items.length, pagesCrawled: result.pagesCrawled, errors: result.errors.length };
    ctx.logger.info({ ipId: task.ipId, keyword: task.keyword, ...summary }, 'crawl finished');
    return summary;
  };
}
