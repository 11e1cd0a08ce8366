/**
 * A stand-in crawler, partition-aware as the real one: a `crawl` worker built by the platform's
 * worker factory (one BullMQ Worker per consumed partition: the current layout's and every older
 * layout's being drained), opening each crawl's flow beside the partition the crawl came from
 * (ctx.target, as src/crawl/process-crawl-job.ts does) and returning `items` as the result (by
 * default two items on sale). Runs inside a platform process (its context) or in the test process
 * beside platform child processes (a registry of the same layout). Counts the runs of every task,
 * so a test can tell a crawl run twice from one run once.
 */
import type { Job } from 'bullmq';
import type { Config } from '../../src/config/index.js';
import { openCrawlFlow } from '../../src/crawl/crawl-flow.js';
import { PermanentError } from '../../src/errors.js';
import { silentLogger, type Logger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import type { QueueTarget } from '../../src/queues/layout.js';
import type { CrawledItem, CrawlJobPayload } from '../../src/queues/declarations/crawl.js';
import type { QueueRegistry } from '../../src/queues/registry.js';
import type { RedisConnections } from '../../src/redis/connections.js';
import type { Keys } from '../../src/redis/keys.js';
import { onSale, resultOf } from '../pipeline/helpers.js';

export interface StandInCrawler {
  worker: PlatformWorker;
  /** Runs of each task id (attempts included). */
  runs: Map<string, number>;
  /** The partition each task was taken from (the last run's). */
  takenFrom: Map<string, QueueTarget>;
  close(): Promise<void>;
}

export interface StandInDeps {
  config: Config;
  connections: RedisConnections;
  keys: Keys;
  queues: QueueRegistry;
  metrics?: Metrics;
  logger?: Logger;
  instanceId?: string;
}

export function startStandInCrawler(
  deps: StandInDeps,
  options: { concurrency?: number; items?: (job: Job<CrawlJobPayload>, run: number) => CrawledItem[] } = {},
): StandInCrawler {
  const runs = new Map<string, number>();
  const takenFrom = new Map<string, QueueTarget>();
  let crawls = 0;
  const items = options.items ?? ((job: Job<CrawlJobPayload>) => [onSale(`${job.data.ipId}-a`, 1000), onSale(`${job.data.ipId}-b`, 2000)]);
  const worker = createWorker(
    { metrics: new Metrics({ defaultMetrics: false }), logger: silentLogger(), ...deps },
    'crawl',
    async (job, jobCtx) => {
      const { taskId } = job.data;
      runs.set(taskId, (runs.get(taskId) ?? 0) + 1);
      takenFrom.set(taskId, jobCtx.target);
      if (!(await openCrawlFlow(deps.queues, job, jobCtx.target))) throw new PermanentError(`the flow of ${taskId} has finished`, 'stale_crawl');
      crawls++;
      return { ...resultOf(job.data, items(job, crawls)), ...(deps.instanceId ? { crawledBy: deps.instanceId } : {}) };
    },
    { concurrency: options.concurrency ?? 6 },
  );
  return { worker, runs, takenFrom, close: () => worker.close() };
}
