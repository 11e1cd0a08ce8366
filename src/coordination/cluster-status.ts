/**
 * What GET /api/cluster shows: the leader (holder of LEADER_TASK's lease), the published config
 * version, every singleton task with its holder, the live instances, and the answering process's
 * own view (the tasks it leads, the config it runs on). With Redis unreachable only the own view
 * is known; `redis` says so. `settingsDisagreements` lists the fleet settings (fleet-settings.ts)
 * the live instances do not agree on, each value by its digest with the instances using it. The JSON names a singleton task `work` (leases[].work,
 * self.leads[].work, instances[].works), as the API always has.
 */
import { LEADER_TASK, type Leadership } from './leadership.js';
import type { SharedConfigView } from './shared-config.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { settingDisagreements, type SettingDisagreement } from './fleet-settings.js';
import { listInstances, type InstanceInfo } from './instance-registry.js';
import { parseLeaseValue } from './lease-scripts.js';
import { SharedConfigStore } from './shared-config-store.js';

export interface ClusterStatus {
  leader: string | null;
  configVersion: number | null;
  leases: { work: string; holder: string | null; token: number | null }[];
  instances: InstanceInfo[];
  settingsDisagreements: SettingDisagreement[];
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
    leads: deps.leadership.held().map((h) => ({ work: h.task, token: h.token, since: h.since.toISOString() })),
    config: { version: config?.version ?? null, source: config?.source ?? null, generatedBy: config?.generatedBy ?? null, loadedAt: config?.loadedAt ?? null },
  };
  try {
    const [instances, configVersion] = await Promise.all([listInstances(redis, keys), new SharedConfigStore(redis, keys).readVersion()]);
    const tasks = [...new Set([LEADER_TASK, ...instances.flatMap((i) => i.works)])].sort();
    // One GET per lease: each lives in its own slot.
    const leases = await Promise.all(
      tasks.map(async (task) => {
        const holder = parseLeaseValue(await redis.get(keys.lease(task)));
        return { work: task, holder: holder?.instanceId ?? null, token: holder?.token ?? null };
      }),
    );
    return {
      leader: leases.find((l) => l.work === LEADER_TASK)?.holder ?? null,
      configVersion,
      leases,
      instances,
      settingsDisagreements: settingDisagreements(instances),
      self,
      redis: 'ok',
    };
  } catch {
    return { leader: null, configVersion: null, leases: [], instances: [], settingsDisagreements: [], self, redis: 'unreachable' };
  }
}
