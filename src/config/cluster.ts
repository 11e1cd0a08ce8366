import { int, setting } from './define.js';

/** Leader leases, shared config and the instance registry (reference: leader-election-config-sync.md). */
export const clusterSettings = {
  leaderTtlMs: setting('LEADER_TTL_MS', int(1000), 60000, 'Lease of each singleton task (the `cluster` one makes the leader); renewed every third of it.'),
  configSyncIntervalMs: setting(
    'CONFIG_SYNC_INTERVAL_MS',
    int(100),
    10000,
    'How often every process checks the shared config version (and reloads it only when it changed).',
  ),
  configRefreshIntervalMs: setting(
    'CONFIG_REFRESH_INTERVAL_MS',
    int(100),
    10000,
    'How often the leader recomputes the shared config from the DB; a new version is published only when it changed.',
  ),
  configTtlSeconds: setting('CONFIG_TTL_SECONDS', int(1), 3600, 'TTL of the published shared config (the leader keeps it alive).'),
  instanceTtlMs: setting('INSTANCE_TTL_MS', int(1000), 30000, 'An instance not heard from for this long leaves the registry; heartbeats every third of it.'),
  schedulerCheckMs: setting(
    'JOB_SCHEDULER_CHECK_MS',
    int(100),
    30000,
    "How often the leader checks that the roles' job schedulers (pools-check, message-persist-sweep) exist, and puts back one Redis lost.",
  ),
};
