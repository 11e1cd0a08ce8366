/**
 * The coordination every process runs, whatever its roles (wired by src/runtime/start-platform.ts):
 *   - leadership: the lease manager behind ctx.leadership (lease-manager.ts);
 *   - sharedConfig: the follower behind ctx.sharedConfig (shared-config-follower.ts), computing
 *     the config itself with `computeSharedConfig` (given by the runtime) when Redis is down;
 *   - registry: the heartbeat into the instance registry (instance-registry.ts), started once
 *     the roles are up and their queues are known.
 * Stop in this order: leadership (singleton tasks stopped, leases released), registry (leave), follower.
 *
 * "Coordination" is this: leases, terms, the shared config and the registry, on a single Redis or
 * a Redis Cluster alike (the `cluster` role and GET /api/cluster keep their names).
 */
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { waitForReady, type RedisClient } from '../redis/connection.js';
import type { RedisConnections } from '../redis/connections.js';
import type { Keys } from '../redis/keys.js';
import { InstanceRegistry } from './instance-registry.js';
import { LeaseManager } from './lease-manager.js';
import { renewEveryMs } from './lease-timing.js';
import { SharedConfigFollower } from './shared-config-follower.js';
import type { SharedConfigContent } from './shared-config.js';
import { SharedConfigStore } from './shared-config-store.js';

export interface CoordinationDeps {
  config: Config;
  connections: RedisConnections;
  /** The shared fail-fast command connection. */
  redis: RedisClient;
  keys: Keys;
  /** The shared config's content, computed from the database (src/runtime/shared-config-content.ts). */
  computeSharedConfig: () => Promise<SharedConfigContent>;
  logger: Logger;
  metrics: Metrics;
}

export interface Coordination {
  leadership: LeaseManager;
  sharedConfig: SharedConfigFollower;
  registry: InstanceRegistry;
  /** Resolves once the lease connection is up (the first lease attempts would fail before). */
  ready(timeoutMs: number): Promise<void>;
}

export function createCoordination(deps: CoordinationDeps): Coordination {
  const { config, keys, logger, metrics } = deps;
  const settings = config.cluster;
  const instanceId = config.derived.instanceId;
  const leaseLogger = logger.child({ component: 'leases' });
  // A connection of its own: renewals never queue behind request-path commands, and a command
  // never outlives a renewal period.
  const leaseRedis = deps.connections.create('command', 'leases', {
    commandTimeoutMs: Math.max(50, Math.min(config.redis.commandTimeoutMs, renewEveryMs(settings.leaderTtlMs))),
  });
  const leadership = new LeaseManager({ redis: leaseRedis, keys, instanceId, ttlMs: settings.leaderTtlMs, logger: leaseLogger, metrics });
  const sharedConfig = new SharedConfigFollower({
    store: new SharedConfigStore(deps.redis, keys),
    compute: deps.computeSharedConfig,
    instanceId,
    intervalMs: settings.configSyncIntervalMs,
    logger,
    metrics,
  });
  const registry = new InstanceRegistry({
    redis: deps.redis,
    keys,
    instanceId,
    ttlMs: settings.instanceTtlMs,
    logger: logger.child({ component: 'registry' }),
    status: () => {
      const config = sharedConfig.current();
      return {
        works: leadership.registered(),
        leads: leadership.held().map((h) => h.task),
        config: { version: config?.version ?? null, source: config?.source ?? null },
      };
    },
  });
  return { leadership, sharedConfig, registry, ready: (timeoutMs) => waitForReady(leaseRedis, timeoutMs) };
}
