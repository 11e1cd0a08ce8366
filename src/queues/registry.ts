/**
 * Producer side of the queues: one BullMQ Queue per registered name, the platform's default
 * job options, and payload validation before anything reaches Redis.
 */
import { FlowProducer, Queue, type JobsOptions, type Job, type JobNode } from 'bullmq';
import type { Config } from '../config/index.js';
import { InvalidInputError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { RedisConnections } from '../redis/connections.js';
import type { Keys } from '../redis/keys.js';
import { queueList, queues, type PayloadOf, type QueueDefinition, type QueueKey } from './definitions.js';

/** A job payload that does not fit its queue's schema: `invalid_payload` naming the field (400 on the API). */
export class PayloadError extends InvalidInputError {
  constructor(
    readonly queue: string,
    field: string,
    message: string,
  ) {
    super('invalid_payload', `${queue}: ${field}: ${message}`, { field });
  }
}

/** Log lines kept per job (job.log: Bull Board's Logs tab, GET /api/tasks/:id); older ones are dropped. */
export const KEEP_LOG_LINES = 100;

/** The platform's default job options (attempts, jittered exponential backoff, retention). */
export function defaultJobOptions(config: Pick<Config, 'queues'>): JobsOptions {
  const q = config.queues;
  return {
    attempts: q.attempts,
    backoff: { type: 'exponential', delay: q.backoffMs, jitter: q.backoffJitter },
    removeOnComplete: { age: q.keepCompletedSeconds },
    removeOnFail: { age: q.keepFailedSeconds },
    keepLogs: KEEP_LOG_LINES,
  };
}

/** One job of a flow: its queue, name, payload and options beyond the queue's defaults. */
export interface FlowJob<K extends QueueKey = QueueKey> {
  queue: K;
  name: string;
  data: PayloadOf<K>;
  opts?: JobsOptions;
}

export class QueueRegistry {
  private readonly instances = new Map<string, Queue>();
  private producer: RedisClient | undefined;
  private flowProducer: FlowProducer | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly deps: { config: Pick<Config, 'queues'>; connections: RedisConnections; keys: Keys }) {}

  get prefix(): string {
    return this.deps.keys.bullPrefix;
  }

  /** The one Redis connection shared by every Queue of this process (fails fast when Redis is down). */
  private connection(): RedisClient {
    this.producer ??= this.deps.connections.create('producer', 'queues');
    return this.producer;
  }

  definition(key: QueueKey): QueueDefinition {
    return queues[key];
  }

  /** The BullMQ Queue of a registered queue (created on first use). */
  queue(key: QueueKey): Queue {
    return this.byName(queues[key].name)!;
  }

  /** The Queue of a name, or undefined when no such queue is registered. */
  byName(name: string): Queue | undefined {
    const def = queueList.find((q) => q.name === name);
    if (!def) return undefined;
    let q = this.instances.get(name);
    if (!q) {
      q = new Queue(name, {
        connection: this.connection(),
        prefix: this.prefix,
        defaultJobOptions: { ...defaultJobOptions(this.deps.config), ...def.jobOptions },
      });
      q.on('error', () => undefined); // surfaced by the operation that failed
      this.instances.set(name, q);
    }
    return q;
  }

  /** Every registered queue (Bull Board, /api/queues, metrics). */
  all(): Queue[] {
    return queueList.map((d) => this.byName(d.name)!);
  }

  /** Validates a payload against the queue's schema; throws PayloadError naming the field. */
  validate<K extends QueueKey>(key: K, data: unknown): PayloadOf<K> {
    const def = queues[key];
    const parsed = def.payload.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new PayloadError(def.name, issue.path.join('.') || '(payload)', issue.message);
    }
    return parsed.data as PayloadOf<K>;
  }

  async add<K extends QueueKey>(key: K, name: string, data: PayloadOf<K>, opts?: JobsOptions): Promise<Job> {
    const payload = this.validate(key, data);
    return this.queue(key).add(name, payload, opts);
  }

  async addBulk<K extends QueueKey>(key: K, jobs: { name: string; data: PayloadOf<K>; opts?: JobsOptions }[]): Promise<Job[]> {
    const checked = jobs.map((j) => ({ ...j, data: this.validate(key, j.data) }));
    return this.queue(key).addBulk(checked);
  }

  /**
   * Adds a parent job and its children as one flow, atomically (every BullMQ key carries the
   * `{prefix}` hash tag, so a flow across queues is one slot in a Redis Cluster). Each job is
   * validated against its queue's payload and gets its queue's default options, which a flow
   * does not read from the queues. A job whose id exists is not added again; an existing child
   * without a parent is attached to this parent (BullMQ's handling of a duplicated flow job).
   */
  async addFlow<P extends QueueKey>(parent: FlowJob<P>, children: FlowJob[]): Promise<JobNode> {
    const node = (j: FlowJob) => ({
      name: j.name,
      queueName: queues[j.queue].name,
      data: this.validate(j.queue, j.data),
      opts: { ...defaultJobOptions(this.deps.config), ...queues[j.queue].jobOptions, ...j.opts },
    });
    if (!this.flowProducer) {
      this.flowProducer = new FlowProducer({ connection: this.connection(), prefix: this.prefix });
      this.flowProducer.on('error', () => undefined); // surfaced by the operation that failed
    }
    return this.flowProducer.add({ ...node(parent), children: children.map(node) });
  }

  close(): Promise<void> {
    return (this.closing ??= Promise.all(
      [...this.instances.values(), ...(this.flowProducer ? [this.flowProducer] : [])].map((q) => q.close().catch(() => undefined)),
    ).then(() => undefined));
  }
}
