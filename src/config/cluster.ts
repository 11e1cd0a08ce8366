import { int, setting } from './define.js';

/** Leader election, shared config and the instance registry (reference: leader-election-config-sync.md). */
export const clusterSettings = {
  leaderTtlMs: setting('LEADER_TTL_MS', int(1000), 60000, 'Leader lease; renewed every third of it.'),
  configSyncIntervalMs: setting('CONFIG_SYNC_INTERVAL_MS', int(100), 10000, 'How often followers check the shared config version.'),
  configTtlSeconds: setting('CONFIG_TTL_SECONDS', int(1), 3600, 'TTL of the published shared config.'),
  instanceTtlMs: setting('INSTANCE_TTL_MS', int(1000), 30000, 'An instance not heard from for this long leaves the registry.'),
};
