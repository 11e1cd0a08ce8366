/**
 * The coordination's periodic tasks, run by the leader on the `maintenance` queue
 * (maintenance-worker.ts):
 *
 *   shared-config-publish    the shared config computed from the DB, published as a new version
 *                            when it changed (publish-shared-config.ts), every
 *                            CONFIG_REFRESH_INTERVAL_MS and whenever a leader takes over
 *   instance-registry-trim   ids not heard from for INSTANCE_TTL_MS dropped from the registry's
 *                            sets (instance-registry.ts), every INSTANCE_TTL_MS / 2
 *   job-schedulers-keep      the roles' job schedulers put back when Redis lost them
 *                            (job-scheduler-keeper.ts), every JOB_SCHEDULER_CHECK_MS and whenever
 *                            a leader takes over
 *
 * They write only as the holder of LEADER_TASK's lease: the publish scripts check the lease
 * value inside Redis, the trim and the keeper check the term right before they write.
 */
import type { Config } from '../config/index.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Metrics } from '../metrics/metrics.js';
import type { QueueRegistry } from '../queues/registry.js';
import { keepSchedulersTask } from './job-scheduler-keeper.js';
import type { MaintenanceTask } from './maintenance-task.js';
import { trimRegistry } from './instance-registry.js';
import { publishSharedConfig } from './publish-shared-config.js';
import type { SharedConfigContent, SharedConfigView } from './shared-config.js';
import { SharedConfigStore } from './shared-config-store.js';

export interface CoordinationTaskDeps {
  config: Config;
  queues: QueueRegistry;
  metrics: Metrics;
  redis: RedisClient;
  keys: Keys;
  instanceId: string;
  sharedConfig: SharedConfigView;
  /** The shared config's content, computed from the database (src/runtime/shared-config-content.ts). */
  computeSharedConfig: () => Promise<SharedConfigContent>;
}

export function coordinationMaintenanceTasks(deps: CoordinationTaskDeps): MaintenanceTask[] {
  const { redis, keys } = deps;
  const settings = deps.config.cluster;
  const store = new SharedConfigStore(redis, keys);
  return [
    {
      name: 'shared-config-publish',
      everyMs: settings.configRefreshIntervalMs,
      runAtStart: true,
      run: async ({ job, term, logger }) => {
        const outcome = await publishSharedConfig(
          {
            store,
            compute: deps.computeSharedConfig,
            sharedConfig: deps.sharedConfig,
            instanceId: deps.instanceId,
            ttlMs: settings.configTtlSeconds * 1000,
            logger,
          },
          term,
        );
        if (outcome.kind === 'published') await job.log(`version ${outcome.version} published (digest ${outcome.digest})`);
        return outcome;
      },
    },
    {
      name: 'instance-registry-trim',
      everyMs: Math.max(500, Math.floor(settings.instanceTtlMs / 2)),
      run: async ({ job, term, logger }) => {
        if (!term.isCurrent()) return { removed: 0, skipped: 'the leader term ended' };
        const removed = await trimRegistry(redis, keys, settings.instanceTtlMs);
        if (removed) {
          logger.info({ removed }, 'instance registry: trimmed instances not heard from');
          await job.log(`${removed} instances not heard from for ${settings.instanceTtlMs} ms trimmed`);
        }
        return { removed };
      },
    },
    keepSchedulersTask(deps),
  ];
}
