/**
 * Producer side of the queues: one BullMQ Queue per registered name, the platform's default
 * job options, and payload validation before anything reaches Redis.
 *
 * With tracing on (`telemetry`, src/tracing/), every Queue and the FlowProducer record their adds
 * and each job carries the trace it was added in, so that its run joins that trace, in whichever
 * process takes it; a job added with a delay runs in a trace of its own instead (the next link of
 * a chain, due hours later, is not part of the run that scheduled it), unless a caller brings it
 * forward (`promote`).
 */
import { FlowProducer, Queue, type JobsOptions, type Job, type JobNode, type Telemetry } from 'bullmq';
import type { Config } from '../config/index.js';
import { InvalidInputError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { RedisConnections } from '../redis/connections.js';
import type { ReplicaAck } from '../redis/replica-ack.js';
import type { Keys } from '../redis/keys.js';
import { queues, type PayloadOf, type QueueDefinition, type QueueKey } from './definitions.js';
import { QueueLayout, type PartitionKey, type QueueTarget } from './layout.js';
import { promoteTraced } from './trace-handover.js';

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
  private readonly targets = new WeakMap<Queue, QueueTarget>();
  private producer: RedisClient | undefined;
  private flowProducer: FlowProducer | undefined;
  private closing: Promise<void> | undefined;
  readonly layout: QueueLayout;

  constructor(
    private readonly deps: { config: Pick<Config, 'queues'>; connections: RedisConnections; keys: Keys; layout?: QueueLayout; telemetry?: Telemetry },
  ) {
    this.layout = deps.layout ?? QueueLayout.single(deps.keys.prefix);
  }

  /** The wait for replicas of the writes that must not be lost (REDIS_REPLICA_ACKS), for the chains' own keys. */
  get replicaAck(): ReplicaAck {
    return this.deps.connections.replicaAck;
  }

  /** The one Redis connection shared by every Queue of this process (fails fast when Redis is down). */
  private connection(): RedisClient {
    this.producer ??= this.deps.connections.create('producer', 'queues');
    return this.producer;
  }

  definition(key: QueueKey): QueueDefinition {
    return queues[key];
  }

  /** The Queue of one partition (created on first use). */
  at(target: QueueTarget): Queue {
    const id = `${target.prefix}:${target.name}`;
    let q = this.instances.get(id);
    if (!q) {
      q = new Queue(target.name, {
        connection: this.connection(),
        prefix: target.prefix,
        defaultJobOptions: { ...defaultJobOptions(this.deps.config), ...queues[target.key].jobOptions },
        ...(this.deps.telemetry ? { telemetry: this.deps.telemetry } : {}),
      });
      q.on('error', () => undefined); // surfaced by the operation that failed
      this.instances.set(id, q);
      this.targets.set(q, target);
    }
    return q;
  }

  /** Where a Queue of this registry sits in the layout. */
  targetOf(queue: Queue): QueueTarget {
    const t = this.targets.get(queue);
    if (!t) throw new Error(`queue ${queue.name} is not one of this registry's`);
    return t;
  }

  /**
   * The Queue new jobs of `key` go to: the partition of `partitionKey` in the current layout (a
   * family that is not partitioned, or a layout of one partition, needs no key).
   */
  queue(key: QueueKey, partitionKey?: PartitionKey): Queue {
    return this.at(this.layout.targetFor(key, partitionKey));
  }

  /** Every Queue of `key`: the current partitions, then those of older layouts still draining. */
  everywhere(key: QueueKey): Queue[] {
    return this.layout.everywhere(key).map((t) => this.at(t));
  }

  /** The Queues that may hold a job of this business key: its current partition first, then older layouts. */
  candidates(key: QueueKey, partitionKey: PartitionKey | undefined): Queue[] {
    return this.layout.candidates(key, partitionKey).map((t) => this.at(t));
  }

  /**
   * The Queue holding job `jobId` of this business key, searched in its current partition and then
   * in older layouts; when no queue knows the id, its current partition (where a new one would go).
   */
  async home(key: QueueKey, partitionKey: PartitionKey | undefined, jobId: string): Promise<Queue> {
    const candidates = this.candidates(key, partitionKey);
    if (candidates.length === 1) return candidates[0]!; // one place it can be: no lookup
    for (const q of candidates) if ((await q.getJobState(jobId)) !== 'unknown') return q;
    return partitionKey === undefined ? candidates[0]! : this.queue(key, partitionKey);
  }

  /** The Queue of a BullMQ queue name (`crawl`, `crawl.3-of-6`), or undefined when no such queue is in the layout. */
  byName(name: string): Queue | undefined {
    const t = this.layout.all().find((x) => x.name === name);
    return t ? this.at(t) : undefined;
  }

  /** Every queue of the layout, partitions and older layouts included (Bull Board, /api/queues, metrics). */
  all(): Queue[] {
    return this.layout.all().map((t) => this.at(t));
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

  /**
   * Runs `add` (adds to `queue` on this registry's connection) and, when the queue's jobs are chain
   * links (`confirmAdds`) and REDIS_REPLICA_ACKS is set, waits for the replicas of the master holding
   * the queue: a shortfall rejects with ReplicaAckError (an outage: a 503, or the job retried). Adds
   * of chain links are idempotent (job ids, deduplication ids), so doing it again adds nothing.
   */
  async confirmed<T>(queue: Queue, add: () => Promise<T>): Promise<T> {
    if (!queues[this.targetOf(queue).key].confirmAdds) return add();
    return this.deps.connections.replicaAck.write(this.connection(), queue.toKey('id'), add);
  }

  /** Adds a job to the current partition of `partitionKey` (see queue()). */
  async add<K extends QueueKey>(key: K, name: string, data: PayloadOf<K>, opts?: JobsOptions, partitionKey?: PartitionKey): Promise<Job> {
    const payload = this.validate(key, data);
    const queue = this.queue(key, partitionKey);
    return this.confirmed(queue, () => queue.add(name, payload, this.traced(opts)));
  }

  /** With tracing on, a delayed job's run starts a trace of its own (see the header). */
  private traced(opts: JobsOptions | undefined): JobsOptions | undefined {
    return opts?.delay ? this.ownTrace(opts) : opts;
  }

  /**
   * Options under which a job runs in a trace of its own rather than its adder's (with tracing
   * on; unchanged off): a delayed job, each run of a job scheduler (else every run of a periodic
   * task would join one trace that never ends).
   */
  ownTrace(opts: JobsOptions): JobsOptions {
    return this.deps.telemetry ? { ...opts, telemetry: { omitContext: true, ...opts.telemetry } } : opts;
  }

  /**
   * Runs a delayed job now (Job.promote); with tracing on, its work joins the caller's trace
   * (trace-handover.ts). Rejects, as Job.promote does, when the job is no longer delayed.
   */
  async promote(queue: Queue, job: Job): Promise<void> {
    if (!this.deps.telemetry) return job.promote();
    return promoteTraced(this.connection(), this.deps.keys, queue, job);
  }

  /** Adds jobs, each to the current partition of its own `partitionKey` (one addBulk per partition). */
  async addBulk<K extends QueueKey>(key: K, jobs: { name: string; data: PayloadOf<K>; opts?: JobsOptions; partitionKey?: PartitionKey }[]): Promise<Job[]> {
    const byQueue = new Map<Queue, { name: string; data: PayloadOf<K>; opts?: JobsOptions }[]>();
    for (const j of jobs) {
      const q = this.queue(key, j.partitionKey);
      let list = byQueue.get(q);
      if (!list) byQueue.set(q, (list = []));
      list.push({ name: j.name, data: this.validate(key, j.data), ...(j.opts ? { opts: this.traced(j.opts)! } : {}) });
    }
    return (await Promise.all([...byQueue].map(([q, list]) => this.confirmed(q, () => q.addBulk(list))))).flat();
  }

  /**
   * Adds a parent job and its children as one flow, atomically: every job goes to the same
   * partition of its family (one hash tag, so one slot in a Redis Cluster): the partition of
   * `alongside`, the queue of the job the flow continues (a crawl's). Each job is validated against
   * its queue's payload and gets its queue's default options, which a flow does not read from the
   * queues. A job whose id exists is not added again; an existing child without a parent is
   * attached to this parent (BullMQ's handling of a duplicated flow job).
   */
  async addFlow<P extends QueueKey>(parent: FlowJob<P>, children: FlowJob[], placement: { alongside: QueueTarget }): Promise<JobNode> {
    const where = (key: QueueKey) => this.layout.sibling(placement.alongside, key);
    const node = (j: FlowJob) => {
      const t = where(j.queue);
      return {
        name: j.name,
        queueName: t.name,
        prefix: t.prefix,
        data: this.validate(j.queue, j.data),
        opts: { ...defaultJobOptions(this.deps.config), ...queues[j.queue].jobOptions, ...j.opts },
      };
    };
    if (!this.flowProducer) {
      this.flowProducer = new FlowProducer({
        connection: this.connection(),
        prefix: this.deps.keys.bullPrefix, // each node names its own
        ...(this.deps.telemetry ? { telemetry: this.deps.telemetry } : {}),
      });
      this.flowProducer.on('error', () => undefined); // surfaced by the operation that failed
    }
    const producer = this.flowProducer;
    return this.confirmed(this.at(where(parent.queue)), () => producer.add({ ...node(parent), children: children.map(node) }));
  }

  close(): Promise<void> {
    return (this.closing ??= Promise.all(
      [...this.instances.values(), ...(this.flowProducer ? [this.flowProducer] : [])].map((q) => q.close().catch(() => undefined)),
    ).then(() => undefined));
  }
}
