/**
 * The shape of a queue's declaration: everything the platform needs to know about a queue, in one
 * object the compiler checks. A queue is declared in the file of its family
 * (src/queues/declarations/<family>.ts, beside its payload schema) and consumed by the role named
 * in it; nothing else lists queues (docs/development.md, "Adding a queue").
 *
 * The compiler holds the parts together: the partition key reads the payload the schema parses,
 * a queue of a partitioned family must say its partition key (and one of a whole family may not),
 * a kept scheduler's job data is a payload of its queue.
 */
import type { JobsOptions } from 'bullmq';
import type { z } from 'zod';
import type { Config } from '../config/index.js';

/**
 * Queue families: the queues whose keys share a hash tag (a flow's parent and child, one slot).
 * The partitioned ones are split into QUEUE_SHARDS partitions (src/queues/layout.ts); a new family
 * is added here.
 */
export const FAMILIES = {
  crawl: { partitioned: true },
  feeds: { partitioned: true },
  messages: { partitioned: true },
  pools: { partitioned: false },
  maintenance: { partitioned: false },
} as const;

export type QueueFamily = keyof typeof FAMILIES;
type PartitionedFamily = { [F in QueueFamily]: (typeof FAMILIES)[F]['partitioned'] extends true ? F : never }[QueueFamily];

/** The process roles that run workers (src/runtime/roles.ts): one consumes each queue. */
export type WorkerRole = 'feeds' | 'crawler' | 'pipeline' | 'pools' | 'messages' | 'cluster';

/** The business key a job's partition is computed from (an IP id, a feed id, a shard). */
export type PartitionKey = string | number;

/** Worker options of a queue (src/queues/create-worker.ts); a role may still pass options that need its own code. */
export interface WorkerDeclaration {
  /** Jobs run at once per process (shared out among the partitions it consumes); default WORKER_CONCURRENCY. */
  concurrency?: (config: Config) => number;
  /** BullMQ's maxStalledCount; default WORKER_MAX_STALLED_COUNT. */
  maxStalledCount?: number;
}

/**
 * A job scheduler that starts the queue's periodic work, upserted by the role that consumes the
 * queue when it starts and put back by the leader should Redis lose it
 * (src/coordination/job-scheduler-keeper.ts).
 */
export interface SchedulerDeclaration<P> {
  /** The scheduler's id (Bull Board's Schedulers view). */
  id: string;
  everyMs: (config: Config) => number;
  /** Each run's job: its name, payload (its partition's key too) and options. */
  name: string;
  data: P;
  opts?: JobsOptions;
}

interface DeclarationBase<S extends z.ZodType> {
  /** The BullMQ queue name (partitions add `.<i>-of-<n>`). */
  name: string;
  description: string;
  /** The role whose workers consume the queue (their names say it: src/queues/create-worker.ts). */
  role: WorkerRole;
  payload: S;
  /** Overrides of the platform defaults (attempts, backoff, retention). */
  jobOptions?: JobsOptions;
  worker?: WorkerDeclaration;
  schedulers?: readonly SchedulerDeclaration<z.infer<S>>[];
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

/** A partitioned family's queue says which business key of a payload picks its partition; another may not. */
type InFamily<F extends QueueFamily, P> = { family: F } & (F extends PartitionedFamily ? { partitionKey(payload: P): PartitionKey } : { partitionKey?: never });

export type QueueDeclaration<S extends z.ZodType = z.ZodType, F extends QueueFamily = QueueFamily> = DeclarationBase<S> & InFamily<F, z.infer<S>>;

export function declareQueue<S extends z.ZodType, F extends QueueFamily>(declaration: QueueDeclaration<S, F>): QueueDeclaration<S, F> {
  return declaration;
}
