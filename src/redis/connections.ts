import { Cluster } from 'ioredis';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import type { RedisTarget } from './redis-target.js';
import { ReplicaAck, type ReplicaAckSettings } from './replica-ack.js';
import { closeRedis, createRedisClient, waitForReady, type ConnectionKind, type RedisClient, type RedisConnectionOptions } from './connection.js';

/** Connection states on the way (back) to ready. */
const RECONNECTING = new Set(['connecting', 'connect', 'close', 'reconnecting']);

/** Least time between two node-error warnings of one cluster connection. */
const NODE_WARN_EVERY_MS = 10_000;

/**
 * Makes and owns a process's Redis connections, so that shutdown closes every one of them and
 * connection errors are logged once per outage instead of once per retry.
 */
export class RedisConnections {
  private readonly clients = new Set<RedisClient>();
  private closing: Promise<void> | undefined;
  /** The wait for replicas of the writes that must not be lost (REDIS_REPLICA_ACKS; off by default). */
  readonly replicaAck: ReplicaAck;

  constructor(
    readonly target: RedisTarget,
    readonly options: RedisConnectionOptions,
    private readonly logger: Logger,
    replicaAck: ReplicaAckSettings = { replicas: 0, timeoutMs: 0 },
  ) {
    this.replicaAck = new ReplicaAck(replicaAck);
  }

  /** A new connection; `overrides` replace this process's default timeouts for it (a domain's own client settings). */
  create(kind: ConnectionKind, name: string, overrides: Partial<RedisConnectionOptions> = {}): RedisClient {
    const client = createRedisClient(this.target, kind, { ...this.options, ...overrides }, name);
    const outage = new OutageLog<Record<string, unknown>>({
      began: (fields) => {
        if (!this.closing) this.logger.warn({ connection: name, ...fields }, 'redis connection error; reconnecting');
      },
      ended: () => this.logger.info({ connection: name }, 'redis connection restored'),
    });
    const lost = (fields: Record<string, unknown>) => outage.failure(fields);
    client.on('error', (err: Error) => lost({ err: err.message }));
    if (client instanceof Cluster) {
      // A Cluster reports its nodes' connection errors as 'node error', and a cluster that lost
      // every node (or failed its ready check: cluster_state not ok) only changes its status; its
      // commands fail ("Cluster isn't ready") until it is ready again.
      let nodeWarnedAt = 0;
      client.on('node error', (err: Error, node: string) => {
        // A node error may leave the cluster ready (the node is reconnected): logged at most every 10 s, not an outage.
        if (this.closing || Date.now() - nodeWarnedAt < NODE_WARN_EVERY_MS) return;
        nodeWarnedAt = Date.now();
        this.logger.warn({ connection: name, node, err: err.message }, 'redis cluster node connection error');
      });
      client.on('reconnecting', () => lost({ err: 'the cluster connection closed or its ready check failed' }));
    }
    client.on('ready', () => outage.success());
    this.clients.add(client);
    return client;
  }

  /**
   * Resolves true once no connection made here is (re)connecting any more, false after
   * `timeoutMs`. A stop waits for it after a Redis restart: BullMQ cannot close a worker whose
   * blocking connection is reconnecting (BullMQ #4656), it would wait out the grace period.
   */
  settled(timeoutMs: number): Promise<boolean> {
    const pending = [...this.clients].filter((c) => RECONNECTING.has(c.status));
    return Promise.all(pending.map((c) => waitForReady(c, timeoutMs))).then(
      () => true,
      () => false,
    );
  }

  /** Closes every connection made here. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= Promise.all([...this.clients].map(closeRedis)).then(() => undefined));
  }
}
