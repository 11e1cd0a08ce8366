/**
 * Waiting for replicas (REDIS_REPLICA_ACKS, REDIS_REPLICA_ACK_TIMEOUT_MS): a write that must not be
 * lost in a failover is followed, on the same connection, by `WAIT numreplicas timeout`, and counts
 * as done only when that many replicas acknowledged it. Which writes, and what the request paths and
 * jobs do on a shortfall: docs/operations.md#what-a-failover-can-lose-and-waiting-for-replicas.
 *
 * Invariant: WAIT covers the replication offset of the connection it is sent on (on a Cluster, the
 * connection to the master of the key's slot), so it is sent only on the connection the write went
 * to and only when that connection has not closed since (noted before the write, with its close
 * count); a reconnect in between is a shortfall (`ReplicaAckError`, which counts as Redis being
 * unavailable: src/redis/redis-unavailable.ts). With REDIS_REPLICA_ACKS=0 nothing is sent and
 * every write is confirmed.
 */
import { Cluster, type Redis } from 'ioredis';
import { keySlot } from '../queues/partitions.js';
import type { Config } from '../config/index.js';
import type { RedisClient } from './connection.js';

export interface ReplicaAckSettings {
  /** Replicas that must acknowledge (0 = no wait). */
  replicas: number;
  timeoutMs: number;
}

export function replicaAckSettings(config: Pick<Config, 'redis'>): ReplicaAckSettings {
  return { replicas: config.redis.replicaAcks, timeoutMs: config.redis.replicaAckTimeoutMs };
}

/** A write that fewer replicas than required acknowledged in time. */
export class ReplicaAckError extends Error {
  constructor(
    message: string,
    readonly acknowledged: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReplicaAckError';
  }
}

/** The write's value, and the shortfall when the replicas did not confirm it. */
export interface AckedWrite<T> {
  value: T;
  shortfall?: ReplicaAckError;
  /**
   * With a shortfall: the connection the write went to, for a caller that must undo the write on
   * the same server and nowhere else (`sameConnection`): after a reconnect it may be talking to a
   * promoted replica that never saw the write.
   */
  sentOn?: ConnectionMark;
}

/** A connection as it was at one moment: the client (a Cluster's node) and how often it had closed. */
export interface ConnectionMark {
  readonly connection: Redis;
  readonly closes: number;
}

export class ReplicaAck {
  constructor(readonly settings: ReplicaAckSettings) {}

  get enabled(): boolean {
    return this.settings.replicas > 0;
  }

  /**
   * Runs `write` (a command on `client` touching `key`), then WAIT on the connection it went to.
   * Rejects as `write` does; a shortfall does not reject but is returned beside the value, for the
   * callers that must undo or redo something with it (a pop's items).
   */
  async afterWrite<T>(client: RedisClient, key: string, write: () => Promise<T>): Promise<AckedWrite<T>> {
    if (!this.enabled) return { value: await write() };
    const clusterCloses = client instanceof Cluster ? closesOf(client) : 0;
    const before = connectionOf(client, key);
    const beforeCloses = before ? closesOf(before) : 0;
    const value = await write();
    const after = connectionOf(client, key);
    const changed =
      !after ||
      after.status !== 'ready' ||
      (client instanceof Cluster && closesOf(client) !== clusterCloses) ||
      (before !== undefined && (after !== before || closesOf(after) !== beforeCloses));
    if (changed) {
      const sentOn = before ? { sentOn: { connection: before, closes: beforeCloses } } : {};
      return { value, ...sentOn, shortfall: new ReplicaAckError('the connection changed while the write was in flight: it may not have reached a replica', 0) };
    }
    const { shortfall } = await this.wait(after);
    return shortfall ? { value, shortfall, sentOn: { connection: after, closes: closesOf(after) } } : { value };
  }

  /** Whether a command on `key` would go to the connection `sentOn` (an AckedWrite's), connected and not closed since. */
  sameConnection(client: RedisClient, key: string, sentOn: ConnectionMark): boolean {
    const connection = connectionOf(client, key);
    return connection === sentOn.connection && closesOf(connection) === sentOn.closes && connection.status === 'ready';
  }

  /** Like afterWrite, but a shortfall rejects with the ReplicaAckError. */
  async write<T>(client: RedisClient, key: string, write: () => Promise<T>): Promise<T> {
    const { value, shortfall } = await this.afterWrite(client, key, write);
    if (shortfall) throw shortfall;
    return value;
  }

  private async wait(connection: Redis): Promise<{ shortfall?: ReplicaAckError }> {
    const { replicas, timeoutMs } = this.settings;
    let acknowledged: number;
    try {
      acknowledged = Number(await connection.call('WAIT', replicas, timeoutMs));
    } catch (err) {
      return { shortfall: new ReplicaAckError(`WAIT failed: ${(err as Error).message}`, 0, { cause: err }) };
    }
    if (acknowledged >= replicas) return {};
    return {
      shortfall: new ReplicaAckError(
        `${acknowledged} of the ${replicas} replica(s) required acknowledged the write within ${timeoutMs} ms (REDIS_REPLICA_ACKS)`,
        acknowledged,
      ),
    };
  }
}

/** No wait (REDIS_REPLICA_ACKS=0): for the collaborators built without one. */
export const NO_REPLICA_ACK = new ReplicaAck({ replicas: 0, timeoutMs: 0 });

const closeCounts = new WeakMap<Redis | Cluster, { n: number }>();

/**
 * How often a connection has closed since it was first asked about (a Cluster: any of its node
 * connections ended). The listener is added on the first call: counts are only ever compared
 * with a count taken earlier.
 */
function closesOf(emitter: Redis | Cluster): number {
  let count = closeCounts.get(emitter);
  if (!count) {
    const c = { n: 0 };
    const bump = () => void c.n++;
    emitter.on('close', bump);
    if (emitter instanceof Cluster) emitter.on('-node', bump);
    closeCounts.set(emitter, (count = c));
  }
  return count.n;
}

/** The connection a command on `key` goes to: the client itself, or on a Cluster its connection to the master of the key's slot (undefined while unknown). */
function connectionOf(client: RedisClient, key: string): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  const master = client.slots[keySlot(key)]?.[0];
  if (!master) return undefined;
  return client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === master);
}
