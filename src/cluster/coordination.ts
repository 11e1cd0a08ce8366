/**
 * What every process runs for the cluster, whatever its roles (wired by src/runtime/start-platform.ts):
 *   - leadership: the lease manager behind ctx.leadership (lease-manager.ts);
 *   - sharedConfig: the follower behind ctx.sharedConfig (shared-config-follower.ts);
 *   - registry: the heartbeat into the instance registry (instance-registry.ts), started once
 *     the roles are up and their queues are known.
 * Stop in this order: leadership (works stopped, leases released), registry (leave), follower.
 */
import type { Config } from '../config/index.js';
import type { Database } from '../db/client.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { waitForReady, type RedisClient } from '../redis/connection.js';
import type { RedisConnections } from '../redis/connections.js';
import type { Keys } from '../redis/keys.js';
import { computeSharedConfig } from './compute-shared-config.js';
import { InstanceRegistry } from './instance-registry.js';
import { LeaseManager } from './lease-manager.js';
import { renewEveryMs } from './lease-timing.js';
import { SharedConfigFollower } from './shared-config-follower.js';
import { SharedConfigStore } from './shared-config-store.js';

export interface ClusterCoordinationDeps {
  config: Config;
  connections: RedisConnections;
  /** The shared fail-fast command connection. */
  redis: RedisClient;
  keys: Keys;
  db: Database;
  logger: Logger;
  metrics: Metrics;
}

export interface ClusterCoordination {
  leadership: LeaseManager;
  sharedConfig: SharedConfigFollower;
  registry: InstanceRegistry;
  /** Resolves once the lease connection is up (the first lease attempts would fail before). */
  ready(timeoutMs: number): Promise<void>;
}

export function createClusterCoordination(deps: ClusterCoordinationDeps): ClusterCoordination {
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
    compute: () => computeSharedConfig(deps.db.prisma),
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
        leads: leadership.held().map((h) => h.work),
        config: { version: config?.version ?? null, source: config?.source ?? null },
      };
    },
  });
  return { leadership, sharedConfig, registry, ready: (timeoutMs) => waitForReady(leaseRedis, timeoutMs) };
}
