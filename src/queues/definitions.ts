/**
 * The registry of queue names with their payload schemas and option overrides. Every queue
 * the platform uses is listed here; Bull Board, /api/queues and the metrics show all of them.
 */
import type { JobsOptions } from 'bullmq';
import type { z } from 'zod';
import { crawlJobPayload, crawlResultJobPayload } from './payloads/crawl.js';
import { feedRefreshPayload } from './payloads/feeds.js';
import { maintenancePayload } from './payloads/maintenance.js';
import { messagePersistPayload } from './payloads/messages.js';
import { poolConsumedPayload, poolRefillPayload } from './payloads/pools.js';

/** The process roles that run workers (src/runtime/roles.ts): one consumes each queue. */
export type WorkerRole = 'feeds' | 'crawler' | 'pipeline' | 'pools' | 'messages' | 'cluster';

export interface QueueDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** The role whose workers consume the queue (their names say it: src/queues/create-worker.ts). */
  role: WorkerRole;
  payload: S;
  /** Overrides of the platform defaults (attempts, backoff, retention). */
  jobOptions?: JobsOptions;
  /**
   * Whether an operator may add jobs by hand (POST /api/queues/:name/jobs). Queues whose jobs form
   * a chain refuse, naming the route that schedules one the right way. Default: allowed.
   */
  manualAdd?: { refused: string };
  /**
   * Its jobs are the links of a chain (one pending job per feed or IP): with REDIS_REPLICA_ACKS each
   * add waits for the replicas (src/redis/replica-ack.ts), since a failover that lost the add would
   * stop the chain. Default: no wait.
   */
  confirmAdds?: boolean;
}

function defineQueue<S extends z.ZodType>(def: QueueDefinition<S>): QueueDefinition<S> {
  return def;
}

export const queues = {
  feedRefresh: defineQueue({
    name: 'feed-refresh',
    role: 'feeds',
    description: 'Refresh of one feed: conditional GET, parse, upsert articles, schedule the next refresh.',
    payload: feedRefreshPayload,
    manualAdd: { refused: 'a feed has one pending refresh; POST /api/queue/schedule-feed {feed_id, force_immediate} refreshes it now' },
    confirmAdds: true,
  }),
  crawl: defineQueue({
    name: 'crawl',
    role: 'crawler',
    description: 'Headless-browser crawl of one IP on the marketplace.',
    payload: crawlJobPayload,
    manualAdd: { refused: 'an IP has one pending crawl; POST /api/ips/:id/crawl crawls it now' },
    confirmAdds: true,
  }),
  crawlResult: defineQueue({
    name: 'crawl-result',
    role: 'pipeline',
    description: 'Result pipeline of one crawl (the parent of the crawl in its flow): state machine, snapshots, hourly stats, alerts, next crawl.',
    payload: crawlResultJobPayload,
    manualAdd: { refused: "a result schedules the IP's next crawl; only a crawl produces one (POST /api/ips/:id/crawl)" },
    confirmAdds: true,
  }),
  poolRefill: defineQueue({
    name: 'pool-refill',
    role: 'pools',
    description: 'Refill of one content pool from the DB.',
    payload: poolRefillPayload,
  }),
  poolConsumed: defineQueue({
    name: 'pool-consumed',
    role: 'pools',
    description: 'Marks popped pool rows consumed in the DB, in batches.',
    payload: poolConsumedPayload,
  }),
  messagePersist: defineQueue({
    name: 'message-persist',
    role: 'messages',
    description: 'Write-behind of accepted session messages to the DB.',
    payload: messagePersistPayload,
  }),
  maintenance: defineQueue({
    name: 'maintenance',
    role: 'cluster',
    description: 'Periodic platform work: one job scheduler per task, run by the leader (reconciliations, shared config, registry and retention trims).',
    payload: maintenancePayload,
  }),
} as const;

export type QueueKey = keyof typeof queues;
export type QueueName = (typeof queues)[QueueKey]['name'];
export type PayloadOf<K extends QueueKey> = z.infer<(typeof queues)[K]['payload']>;

export const queueList: QueueDefinition[] = Object.values(queues);

/** The key of the registered queue named `name` (`feed-refresh` → feedRefresh), or undefined. */
export function findQueueKey(name: string): QueueKey | undefined {
  return (Object.keys(queues) as QueueKey[]).find((k) => queues[k].name === name);
}
