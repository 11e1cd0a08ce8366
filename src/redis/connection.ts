/**
 * The one place Redis connections are made. Three kinds:
 *
 * - `bullmq`: for BullMQ Workers/QueueEvents; maxRetriesPerRequest null (BullMQ requires it), commands
 *   wait across a Redis restart and the connection comes back by itself.
 * - `producer`: for BullMQ Queues in request paths (adding jobs, the job console, Bull Board); no
 *   offline queue, so adding a job while Redis is down fails fast and the caller can take its
 *   fallback path, and a command timeout (REDIS_QUEUE_COMMAND_TIMEOUT_MS), so that a frozen Redis
 *   (SIGSTOP, a hung host: the connection stays "ready" and commands wait for ever) fails a
 *   command instead of holding its request. A job added with a timeout may still be added once
 *   Redis runs again: adds that must happen once carry a job id (BullMQ's deduplication).
 * - `command`: raw commands in request paths (pools, caches, blacklist); fail fast with a
 *   command timeout, reconnect in the background.
 * - `once`: raw commands that must run at most once and whose late replies matter (pool pops):
 *   no offline queue; commands in flight fail the moment the connection drops and are never
 *   re-sent after a reconnect; no command timeout, so the caller races its own deadline and still
 *   sees a reply that comes after it.
 *
 * A target (redis-target.ts) is one server (REDIS_URL), the master of a Sentinel group
 * (REDIS_SENTINELS) or a Redis Cluster (REDIS_CLUSTER_NODES). Invariants across a failover
 * (docs/operations.md#redis-high-availability): every connection reconnects by itself, forever;
 * one never settles on a replica (the ready check compares the server's role with `master`); a
 * READONLY reply (a master demoted while connected) reconnects and re-sends the refused command,
 * which Redis ran nothing of. Sentinel's own failover detector is off (those two cover it).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/index.js';
import type { RedisTarget } from './redis-target.js';

export type RedisClient = Redis | Cluster;
export type ConnectionKind = 'bullmq' | 'producer' | 'command' | 'once';

export interface RedisConnectionOptions {
  connectTimeoutMs: number;
  /** Of the `command` kind. */
  commandTimeoutMs: number;
  /** Of the `producer` kind (queues); default: commandTimeoutMs. */
  queueCommandTimeoutMs?: number;
}

export function connectionOptions(config: Config): RedisConnectionOptions {
  return {
    connectTimeoutMs: config.redis.connectTimeoutMs,
    commandTimeoutMs: config.redis.commandTimeoutMs,
    queueCommandTimeoutMs: config.redis.queueCommandTimeoutMs,
  };
}

const TRYAGAIN_RETRY_MS = 100;
/** Redirections (and TRYAGAIN retries) a queue connection follows: about 10 s of a slot migration. */
const QUEUE_MAX_REDIRECTIONS = 100;

const retryStrategy = (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2000);

/**
 * READONLY: the server was a master and is a replica now (a failover demoted it). Reconnect, and
 * send the command again once connected (2): Redis refused it before running any of it.
 */
export const reconnectOnError = (err: Error): 2 | false => (err.message.startsWith('READONLY') ? 2 : false);

function optionsFor(kind: ConnectionKind, o: RedisConnectionOptions): RedisOptions {
  const base: RedisOptions = {
    connectTimeout: o.connectTimeoutMs,
    retryStrategy,
    lazyConnect: false,
    reconnectOnError,
  };
  switch (kind) {
    case 'bullmq':
      return { ...base, maxRetriesPerRequest: null, enableReadyCheck: true };
    case 'producer':
      return { ...base, maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: o.queueCommandTimeoutMs ?? o.commandTimeoutMs };
    case 'command':
      return { ...base, maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: o.commandTimeoutMs };
    case 'once':
      return { ...base, maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false };
  }
}

export function createRedisClient(target: RedisTarget, kind: ConnectionKind, o: RedisConnectionOptions, name?: string): RedisClient {
  const options = { ...optionsFor(kind, o), ...(name ? { connectionName: name } : {}) };
  if (target.kind === 'sentinel') {
    return new Redis({
      ...options,
      sentinels: target.sentinels,
      name: target.name,
      role: 'master',
      ...(target.password ? { password: target.password } : {}),
      ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
      // The role check that tells the promoted replica from the old master (see the header).
      enableReadyCheck: true,
      sentinelCommandTimeout: o.connectTimeoutMs,
      // Every sentinel unreachable: ask again with the reconnect's backoff, forever.
      sentinelRetryStrategy: retryStrategy,
      failoverDetector: false,
    });
  }
  if (target.kind === 'cluster') {
    return new Cluster(target.nodes, {
      redisOptions: { ...options, ...(target.password ? { password: target.password } : {}) },
      clusterRetryStrategy: retryStrategy,
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      // The ready check (CLUSTER INFO) goes to a sampled node; without an offline queue ioredis
      // rejects a command for a node that is still connecting ("Connection is closed"), so on a
      // connect the check failed at random and the whole cluster connection was torn down and
      // reconnected, over and over under load, failing every command meanwhile ("Cluster isn't
      // ready"). Without the check such a connection is ready once it has the slot map; a cluster
      // that is really down answers CLUSTERDOWN, which fails fast as well.
      // Nor on queue connections: while a master fails over the check finds cluster_state:fail, and
      // ioredis then reconnects without ever settling the promise of the connect() it was checking
      // for; BullMQ awaits that promise when it resets a worker's blocking connection, so the worker
      // stopped taking jobs for good after a failover (test/redis-ha/cluster-failover.test.ts). A
      // queue connection retries CLUSTERDOWN (100 ms apart, up to QUEUE_MAX_REDIRECTIONS) instead.
      enableReadyCheck: false,
      // While a slot migrates, a script or transaction touching keys of both sides (BullMQ's, which
      // create keys) is answered TRYAGAIN until the migration ends: a queue connection waits that
      // out (retried every 100 ms, for up to about 10 s) rather than failing a job's add or its
      // completion, which would leave the job to the stalled-job check. Request paths keep the
      // default (1.6 s) and their own deadlines.
      retryDelayOnTryAgain: TRYAGAIN_RETRY_MS,
      maxRedirections: kind === 'bullmq' || kind === 'producer' ? QUEUE_MAX_REDIRECTIONS : 16,
      // A command whose node connection closed may have run: never retry it elsewhere.
      ...(kind === 'once' ? { retryDelayOnFailover: 0 } : {}),
    });
  }
  return new Redis(target.url, options);
}

/** Resolves once the client is ready (or rejects after `timeoutMs`). */
export function waitForReady(client: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}

/** Closes a client: QUIT when connected, else disconnect. Never throws. */
export async function closeRedis(client: RedisClient): Promise<void> {
  try {
    if (client.status === 'ready') await client.quit();
    else client.disconnect();
  } catch {
    client.disconnect();
  }
}
