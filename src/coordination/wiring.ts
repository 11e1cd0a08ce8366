/**
 * The coordination's view for the API: GET /api/cluster and GET /api/cluster/config. Leases, the
 * term loop and the shared config follower themselves are built by createCoordination
 * (coordination.ts) with the platform context, since every role depends on them.
 */
import type { PlatformContext } from '../context.js';
import { clusterStatus, type ClusterStatus } from './cluster-status.js';
import type { SharedConfigSnapshot } from './shared-config.js';

export interface ClusterView {
  status(): Promise<ClusterStatus>;
  /** The shared config this process runs on; undefined until the first load. */
  config(): SharedConfigSnapshot | undefined;
}

export function wireCoordinationApi(ctx: Pick<PlatformContext, 'redis' | 'keys' | 'instanceId' | 'leadership' | 'sharedConfig'>): ClusterView {
  return {
    status: () => clusterStatus({ redis: ctx.redis, keys: ctx.keys, instanceId: ctx.instanceId, leadership: ctx.leadership, sharedConfig: ctx.sharedConfig }),
    config: () => ctx.sharedConfig.current(),
  };
}
