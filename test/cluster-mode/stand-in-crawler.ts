/**
 * A stand-in crawler inside a platform process, partition-aware as the real one: a `crawl` worker
 * built by the platform's worker factory (one BullMQ Worker per consumed partition: the current
 * layout's and every older layout's being drained), opening each crawl's flow beside the partition
 * the crawl came from (ctx.target) and returning two items as the result. Counts the runs of
 * every task, so a test can tell a crawl run twice from one run once.
 */
import { openCrawlFlow } from '../../src/crawl/crawl-flow.js';
import type { PlatformContext } from '../../src/context.js';
import { PermanentError } from '../../src/errors.js';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import type { QueueTarget } from '../../src/queues/layout.js';
import { onSale, resultOf } from '../pipeline/helpers.js';

export interface StandInCrawler {
  worker: PlatformWorker;
  /** Runs of each task id (attempts included). */
  runs: Map<string, number>;
  /** The partition each task was taken from (the last run's). */
  takenFrom: Map<string, QueueTarget>;
  close(): Promise<void>;
}

export function startStandInCrawler(ctx: PlatformContext, options: { concurrency?: number } = {}): StandInCrawler {
  const runs = new Map<string, number>();
  const takenFrom = new Map<string, QueueTarget>();
  const worker = createWorker(
    ctx,
    'crawl',
    async (job, jobCtx) => {
      const { ipId, taskId } = job.data;
      runs.set(taskId, (runs.get(taskId) ?? 0) + 1);
      takenFrom.set(taskId, jobCtx.target);
      if (!(await openCrawlFlow(ctx.queues, job, jobCtx.target))) throw new PermanentError(`the flow of ${taskId} has finished`, 'stale_crawl');
      return { ...resultOf(job.data, [onSale(`${ipId}-a`, 1000), onSale(`${ipId}-b`, 2000)]), crawledBy: ctx.instanceId };
    },
    { concurrency: options.concurrency ?? 6 },
  );
  return { worker, runs, takenFrom, close: () => worker.close() };
}
