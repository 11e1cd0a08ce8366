/**
 * The pools' wiring: their collaborators built from the platform context, one set per process
 * and role (the pools role's workers, the API's PoolService).
 */
import type { PlatformContext } from '../context.js';
import { poolMetrics, type PoolMetrics } from './pool-metrics.js';
import { PoolLists } from './pool-lists.js';
import { PoolRows } from './pool-rows.js';
import { PoolTriggers } from './pool-triggers.js';
import { PoolService } from './pool-service.js';

export interface PoolDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: PlatformContext['config']['pools'];
  metrics: PoolMetrics;
  logger: PlatformContext['logger'];
}

export function wirePools(ctx: PlatformContext, component: string): PoolDeps {
  const logger = ctx.logger.child({ component });
  // The pools' own connection: commands sent at most once, deadlines kept by PoolLists (see there).
  const redis = ctx.connections.create('once', component);
  const { commandTimeoutMs, connectTimeoutMs } = ctx.connections.options;
  return {
    lists: new PoolLists(redis, ctx.keys, { commandTimeoutMs, connectTimeoutMs, replicaAck: ctx.connections.replicaAck }),
    rows: new PoolRows(ctx.db.pool),
    triggers: new PoolTriggers(ctx.queues, logger, ctx.config.pools.triggerIntervalMs),
    settings: ctx.config.pools,
    metrics: poolMetrics(ctx.metrics),
    logger,
  };
}

/** The service the API's pool routes call. */
export function wirePoolsApi(ctx: PlatformContext): PoolService {
  return new PoolService(wirePools(ctx, 'pools-api'));
}
