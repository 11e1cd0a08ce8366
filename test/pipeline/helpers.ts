/**
 * Test helpers of the pipeline domain: a stand-in crawler that honours the crawler's contract
 * (consume `crawl`, add the result to `crawl-result` as job `result-<taskId>`, complete), item
 * builders, and views of the crawl queue per IP.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { CrawledItem, CrawlJobPayload, CrawlResultPayload } from '../../src/queues/payloads/crawl.js';
import { createKeys } from '../../src/redis/keys.js';

export const keys = createKeys('wp');
export const PENDING_STATES = ['waiting', 'delayed', 'prioritized'] as const;

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

  /** Pending (waiting/delayed/prioritized) crawl jobs, by IP. */
  async pendingByIp(): Promise<Map<number, Job[]>> {
    const jobs = (await this.crawl.getJobs([...PENDING_STATES], 0, -1)).filter(Boolean);
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

  /** Delivers a result as the crawler does. */
  async deliver(result: CrawlResultPayload): Promise<Job> {
    return this.results.add('result', result, { jobId: `result-${result.taskId}`, attempts: 3 });
  }

  async close(): Promise<void> {
    await Promise.all([this.crawl.close(), this.results.close()]);
    this.redis.disconnect();
  }
}

/**
 * A stand-in crawler: takes crawl jobs and answers each with the items `itemsFor` gives (or
 * throws what it throws), delivering the result the way the real crawler does.
 */
export function startStandInCrawler(
  redisUrl: string,
  itemsFor: (job: Job<CrawlJobPayload>) => CrawledItem[] | Promise<CrawledItem[]>,
  options: { concurrency?: number } = {},
): { worker: Worker; close(): Promise<void> } {
  const connection = { url: redisUrl, maxRetriesPerRequest: null };
  const results = new Queue('crawl-result', { connection, prefix: keys.bullPrefix });
  results.on('error', () => undefined);
  const worker = new Worker<CrawlJobPayload>(
    'crawl',
    async (job) => {
      const items = await itemsFor(job);
      await results.add('result', resultOf(job.data, items), { jobId: `result-${job.data.taskId}`, attempts: 3 });
      return { items: items.length };
    },
    { connection, prefix: keys.bullPrefix, concurrency: options.concurrency ?? 5 },
  );
  worker.on('error', () => undefined);
  return {
    worker,
    close: async () => {
      await worker.close();
      await results.close();
    },
  };
}
