/**
 * Test helpers of the pipeline domain: a stand-in crawler that honours the crawler's contract
 * (consume `crawl`, open the crawl's flow with the platform's own openCrawlFlow, return the
 * result), item builders, and views of the crawl queue per IP.
 */
import { Queue, Worker, type Job, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/index.js';
import { openCrawlFlow } from '../../src/crawl/crawl-flow.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { CrawledItem, CrawlJobPayload, CrawlResultPayload } from '../../src/queues/declarations/crawl.js';
import { PENDING_STATES } from '../../src/queues/job-states.js';
import { QueueRegistry } from '../../src/queues/registry.js';
import { connectionOptions } from '../../src/redis/connection.js';
import { RedisConnections } from '../../src/redis/connections.js';
import { createKeys } from '../../src/redis/keys.js';

export const keys = createKeys('wp');

export function onSale(sourceId: string, price = 1000): CrawledItem {
  return { sourceId, title: `item ${sourceId}`, price, imageUrl: null, itemUrl: `http://127.0.0.1/item/${sourceId}`, status: 'on_sale' };
}
export function sold(sourceId: string, price = 1000): CrawledItem {
  return { ...onSale(sourceId, price), status: 'sold' };
}

export function resultOf(task: Pick<CrawlJobPayload, 'ipId' | 'taskId'>, items: CrawledItem[], crawledAt = new Date()): CrawlResultPayload {
  return { ipId: task.ipId, taskId: task.taskId, items, totalFound: items.length, pagesCrawled: 1, crawledAt: crawledAt.toISOString(), errors: [] };
}

/** Queues of the platform under test, seen from outside. */
export class CrawlQueues {
  readonly crawl: Queue;
  readonly results: Queue;
  readonly redis: Redis;

  constructor(redisUrl: string) {
    const connection = { url: redisUrl, maxRetriesPerRequest: null };
    this.crawl = new Queue('crawl', { connection, prefix: keys.bullPrefix });
    this.results = new Queue('crawl-result', { connection, prefix: keys.bullPrefix });
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    for (const c of [this.crawl, this.results, this.redis]) c.on('error', () => undefined);
  }

  /** Pending crawl jobs (PENDING_STATES), by IP. */
  async pendingByIp(): Promise<Map<number, Job[]>> {
    const jobs = (await this.crawl.getJobs([...PENDING_STATES] as JobType[], 0, -1)).filter(Boolean);
    const out = new Map<number, Job[]>();
    for (const job of jobs) out.set(job.data.ipId, [...(out.get(job.data.ipId) ?? []), job]);
    return out;
  }

  async pendingFor(ipId: number): Promise<Job[]> {
    return (await this.pendingByIp()).get(ipId) ?? [];
  }

  async chain(ipId: number): Promise<string | null> {
    return this.redis.hget(keys.crawlChain(Math.floor(ipId / 100)), String(ipId));
  }

  /** Every IP's chain entry. */
  async chains(): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const b of await this.redis.smembers(keys.crawlChainBuckets())) {
      for (const [ip, task] of Object.entries(await this.redis.hgetall(keys.crawlChain(Number(b))))) out.set(Number(ip), task);
    }
    return out;
  }

  async dropChain(ipId: number): Promise<void> {
    await this.redis.hdel(keys.crawlChain(Math.floor(ipId / 100)), String(ipId));
  }

  /** Delivers a result on its own (a `crawl-result` job carrying the result, as before crawls were flows). */
  async deliver(result: CrawlResultPayload): Promise<Job> {
    return this.results.add('result', result, { jobId: `result-${result.taskId}`, attempts: 3 });
  }

  async close(): Promise<void> {
    await Promise.all([this.crawl.close(), this.results.close()]);
    this.redis.disconnect();
  }
}

/**
 * A stand-in crawler: takes crawl jobs, opens each one's flow as the real crawler does, and
 * returns the items `itemsFor` gives as the result (or throws what it throws).
 */
export function startStandInCrawler(
  redisUrl: string,
  itemsFor: (job: Job<CrawlJobPayload>) => CrawledItem[] | Promise<CrawledItem[]>,
  options: { concurrency?: number } = {},
): { worker: Worker; close(): Promise<void> } {
  const connection = { url: redisUrl, maxRetriesPerRequest: null };
  const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: redisUrl, REDIS_PREFIX: 'wp' });
  const connections = new RedisConnections({ kind: 'single', url: redisUrl }, connectionOptions(config), silentLogger());
  const queues = new QueueRegistry({ config, connections, keys });
  const worker = new Worker<CrawlJobPayload>(
    'crawl',
    async (job) => {
      if (!(await openCrawlFlow(queues, job, queues.layout.target('crawl', 0)))) throw new Error('stale crawl');
      return resultOf(job.data, await itemsFor(job));
    },
    { connection, prefix: keys.bullPrefix, concurrency: options.concurrency ?? 5 },
  );
  worker.on('error', () => undefined);
  return {
    worker,
    close: async () => {
      await worker.close();
      await queues.close();
      await connections.close();
    },
  };
}
