/**
 * What GET /api/cluster shows: the leader (holder of the `cluster` lease), the published config
 * version, every singleton work with its holder, the live instances, and the answering process's
 * own view (the works it leads, the config it runs on). With Redis unreachable only the own view
 * is known; `redis` says so.
 */
import type { Leadership, SharedConfigView } from '../context.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { listInstances, type InstanceInfo } from './instance-registry.js';
import { parseLeaseValue } from './lease-scripts.js';
import { CLUSTER_WORK } from './lease-manager.js';
import { SharedConfigStore } from './shared-config-store.js';

export interface ClusterStatus {
  leader: string | null;
  configVersion: number | null;
  leases: { work: string; holder: string | null; token: number | null }[];
  instances: InstanceInfo[];
  self: {
    id: string;
    leads: { work: string; token: number; since: string }[];
    config: { version: number | null; source: 'shared' | 'local' | null; generatedBy: string | null; loadedAt: string | null };
  };
  redis: 'ok' | 'unreachable';
}

export interface ClusterStatusDeps {
  redis: RedisClient;
  keys: Keys;
  instanceId: string;
  leadership: Leadership;
  sharedConfig: SharedConfigView;
}

export async function clusterStatus(deps: ClusterStatusDeps): Promise<ClusterStatus> {
  const { redis, keys } = deps;
  const config = deps.sharedConfig.current();
  const self: ClusterStatus['self'] = {
    id: deps.instanceId,
    leads: deps.leadership.held().map((h) => ({ work: h.work, token: h.token, since: h.since.toISOString() })),
    config: { version: config?.version ?? null, source: config?.source ?? null, generatedBy: config?.generatedBy ?? null, loadedAt: config?.loadedAt ?? null },
  };
  try {
    const [instances, configVersion] = await Promise.all([listInstances(redis, keys), new SharedConfigStore(redis, keys).readVersion()]);
    const works = [...new Set([CLUSTER_WORK, ...instances.flatMap((i) => i.works)])].sort();
    // One GET per lease: each lives in its own slot.
    const leases = await Promise.all(
      works.map(async (work) => {
        const holder = parseLeaseValue(await redis.get(keys.lease(work)));
        return { work, holder: holder?.instanceId ?? null, token: holder?.token ?? null };
      }),
    );
    return { leader: leases.find((l) => l.work === CLUSTER_WORK)?.holder ?? null, configVersion, leases, instances, self, redis: 'ok' };
  } catch {
    return { leader: null, configVersion: null, leases: [], instances: [], self, redis: 'unreachable' };
  }
}
