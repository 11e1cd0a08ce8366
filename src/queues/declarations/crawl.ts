import { z } from 'zod';
import { declareQueue } from '../declare-queue.js';

/** One crawl task of an IP: fixed pages of on-sale then sold results. */
export const crawlJobPayload = z.object({
  ipId: z.number().int().positive(),
  keyword: z.string().min(1),
  taskId: z.string().min(1).max(128),
  pagesOnSale: z.number().int().min(0).max(50),
  pagesSold: z.number().int().min(0).max(50),
});
export type CrawlJobPayload = z.infer<typeof crawlJobPayload>;

export const crawledItem = z.object({
  sourceId: z.string().min(1),
  title: z.string(),
  price: z.number().int().min(0),
  imageUrl: z.string().nullable(),
  itemUrl: z.string().nullable(),
  status: z.enum(['on_sale', 'sold']),
});
export type CrawledItem = z.infer<typeof crawledItem>;

export const crawlPageError = z.object({
  status: z.enum(['on_sale', 'sold']),
  page: z.number().int().min(1),
  errorClass: z.enum(['timeout', 'blocked', 'network', 'unknown']),
  message: z.string(),
});
export type CrawlPageError = z.infer<typeof crawlPageError>;

/** What the crawler returns (the crawl job's return value) and the pipeline consumes. */
export const crawlResultPayload = z.object({
  ipId: z.number().int().positive(),
  taskId: z.string().min(1),
  items: z.array(crawledItem),
  totalFound: z.number().int().min(0),
  pagesCrawled: z.number().int().min(0),
  crawledAt: z.string().datetime(),
  errors: z.array(crawlPageError),
  /** The platform instance that crawled (absent in results queued before it was recorded). */
  crawledBy: z.string().max(256).optional(),
});
export type CrawlResultPayload = z.infer<typeof crawlResultPayload>;

/** The processing of one crawl's result: the parent of the crawl job in its flow (the result is the child's return value). */
export const crawlResultRef = z.object({
  ipId: z.number().int().positive(),
  taskId: z.string().min(1).max(128),
});

/**
 * A `crawl-result` job: the flow parent of a crawl (ids only), or a result delivered on its own
 * with the result in the job (a standalone job, e.g. queued before crawls were flows).
 */
export const crawlResultJobPayload = z.union([crawlResultPayload, crawlResultRef]);
export type CrawlResultJobPayload = z.infer<typeof crawlResultJobPayload>;

/** The crawl family: a crawl and the processing of its result share a partition (an IP's), so a flow's jobs share a slot. */
export const crawlQueues = {
  crawl: declareQueue({
    name: 'crawl',
    family: 'crawl',
    role: 'crawler',
    description: 'Headless-browser crawl of one IP on the marketplace.',
    payload: crawlJobPayload,
    partitionKey: (job) => job.ipId,
    worker: { concurrency: (config) => config.crawl.concurrency },
    manualAdd: { refused: 'an IP has one pending crawl; POST /api/ips/:id/crawl crawls it now' },
    confirmAdds: true,
  }),
  crawlResult: declareQueue({
    name: 'crawl-result',
    family: 'crawl',
    role: 'pipeline',
    description: 'Result pipeline of one crawl (the parent of the crawl in its flow): state machine, snapshots, hourly stats, alerts, next crawl.',
    payload: crawlResultJobPayload,
    partitionKey: (job) => job.ipId,
    worker: { concurrency: (config) => config.pipeline.concurrency },
    manualAdd: { refused: "a result schedules the IP's next crawl; only a crawl produces one (POST /api/ips/:id/crawl)" },
    confirmAdds: true,
  }),
};
