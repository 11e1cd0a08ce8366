/**
 * The `crawl` job: open the crawl's flow, crawl, return the result.
 *
 * A crawl is a BullMQ flow: its parent is the processing of its result (queue `crawl-result`,
 * job `result-<taskId>`), its child the crawl itself (queue `crawl`, job `<taskId>`), so Bull
 * Board shows them together. The pending crawl is a plain delayed job (a flow per pending crawl
 * would cost 2.5 times its Redis memory, and every active IP has one); the crawler opens the flow
 * when it takes the crawl, by adding the parent with the crawl as its child: BullMQ finds the
 * crawl's job id taken and attaches the existing job to the new parent (crawl-flow.ts).
 *
 * - Every attempt opens the flow first (a no-op once open), so a crawl retried, re-run after a
 *   stall, delayed by a block or replayed belongs to its flow whatever happened before.
 * - The return value is the result; completing the crawl hands it to the parent and moves the
 *   parent to the pipeline in the same script, so a result exists exactly when its crawl completed.
 * - A crawl that fails for good is an ignored dependency of its parent (ignoreDependencyOnFailure):
 *   the parent runs anyway and schedules the IP's next crawl (process-result.ts, `crawlEnded`).
 * - A parent that fails (the persist step) is retried on its own: the browser never runs again.
 * - A crawl whose parent had already finished (a dead crawl retried by hand after its failure was
 *   processed and the IP moved on to its next crawl) fails at once without crawling: its result
 *   would reach nobody. Replaying a dead crawl is CrawlScheduler.replay.
 *
 * Progress (Bull Board, GET /api/tasks/:id): pages done of planned, items so far, page errors,
 * blocks (over every attempt), the proxy; one log line per page.
 */
import type { Job } from 'bullmq';
import { BlockedError, PermanentError } from '../errors.js';
import type { JobProcessor } from '../queues/create-worker.js';
import type { CrawlJobPayload, CrawlResultPayload } from '../queues/payloads/crawl.js';
import type { QueueRegistry } from '../queues/registry.js';
import { openCrawlFlow } from './crawl-flow.js';
import { crawlTask, type CrawlDeps } from './crawl-task.js';
import type { CrawlProgress } from './crawl-tally.js';

/** A crawl handed back by a stopping crawler waits this long before another crawler takes it. */
const HAND_BACK_DELAY_MS = 1000;

/** Blocks counted by earlier attempts of this crawl (kept in its progress). */
function blocksSoFar(job: Job): number {
  const p = job.progress as Partial<CrawlProgress> | number | string | boolean | null;
  return typeof p === 'object' && p !== null && typeof p.blocks === 'number' ? p.blocks : 0;
}

export function createCrawlProcessor(deps: CrawlDeps & { queues: QueueRegistry; instanceId: string }): JobProcessor<'crawl', CrawlResultPayload> {
  return async (job, ctx) => {
    const task: CrawlJobPayload = job.data;
    if (!(await openCrawlFlow(deps.queues, job, ctx.target))) {
      throw new PermanentError(
        `the flow of crawl ${task.taskId} has finished (its result or failure was processed); this re-run would reach nobody: crawl the IP's current link instead (POST /api/ips/${task.ipId}/crawl)`,
        'stale_crawl',
      );
    }
    const report = async (progress: CrawlProgress, line: string) => {
      // Progress is for people: a Redis hiccup here must not fail the crawl.
      await Promise.all([job.updateProgress(progress), job.log(line)]).catch((err: Error) =>
        ctx.logger.debug({ err: err.message }, 'crawl progress not recorded'),
      );
    };
    let crawled;
    try {
      crawled = await crawlTask(deps, task, ctx.logger, { report, blocksBefore: blocksSoFar(job) });
    } catch (err) {
      // The crawler stopped under this crawl (its grace period ran out and the browsers closed):
      // hand the crawl back without spending an attempt; the next crawler takes it whole.
      if (deps.browsers.stopping)
        throw new BlockedError('the crawler stopped during this crawl; handed back', HAND_BACK_DELAY_MS, 'shutdown', { cause: err, routine: true });
      throw err;
    }
    // A crawl that ended while the browsers were closing may be missing pages: not a result.
    if (deps.browsers.stopping && crawled.errors.length)
      throw new BlockedError('the crawler stopped during this crawl; handed back', HAND_BACK_DELAY_MS, 'shutdown', { routine: true });
    const result: CrawlResultPayload = { ...crawled, crawledBy: deps.instanceId };
    ctx.logger.info(
      {
        ipId: task.ipId,
        keyword: task.keyword,
        taskId: task.taskId,
        items: result.items.length,
        pagesCrawled: result.pagesCrawled,
        errors: result.errors.length,
      },
      'crawl finished',
    );
    return result;
  };
}
