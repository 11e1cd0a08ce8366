/**
 * The fleet as a whole, exported by the leader only (the process of the cluster role that holds
 * the `cluster` lease), read at scrape time:
 *   wp_cluster_instances{role}           live processes running each role (instance registry): 0
 *                                        for a role no process runs (alert RoleWithoutProcess);
 *   wp_queue_workers{queue}              BullMQ workers connected to each queue (getWorkersCount,
 *                                        summed over its partitions): 0 with jobs waiting is a
 *                                        queue nobody takes from (alert QueueWithoutWorker);
 *   wp_cluster_settings_variants{setting} values of each fleet setting in use (fleet-settings.ts):
 *                                        above 1, processes disagree (alert FleetSettingsDisagree).
 * One process exports them, so that sums and alerts over the fleet count each thing once; the
 * other processes of the cluster role export the families without series. Every process's registry entry and every BullMQ
 * worker live in Redis, so the leader sees the processes Prometheus may not scrape.
 */
import type { PlatformContext } from '../context.js';
import { settingVariants } from '../coordination/fleet-settings.js';
import { listInstances } from '../coordination/instance-registry.js';
import { LEADER_TASK } from '../coordination/leadership.js';
import { queues as queueDefinitions, type QueueKey } from '../queues/definitions.js';

export const FLEET_METRICS = ['wp_cluster_instances', 'wp_queue_workers', 'wp_cluster_settings_variants'] as const;

export function exportFleetMetrics(ctx: Pick<PlatformContext, 'metrics' | 'redis' | 'keys' | 'queues' | 'leadership'>, roles: readonly string[]): void {
  const instances = ctx.metrics.gauge('wp_cluster_instances', 'Live platform processes running each role (exported by the leader).', ['role']);
  const workers = ctx.metrics.gauge('wp_queue_workers', 'BullMQ workers connected to each queue, all its partitions (exported by the leader).', ['queue']);
  const variants = ctx.metrics.gauge(
    'wp_cluster_settings_variants',
    'Values of each setting the fleet must share (OUTBOUND_ALLOW, ...) in use among the live processes; above 1 they disagree (exported by the leader).',
    ['setting'],
  );
  ctx.metrics.onScrape(async () => {
    if (!ctx.leadership.held().some((h) => h.task === LEADER_TASK)) {
      instances.reset();
      workers.reset();
      variants.reset();
      return;
    }
    const [live, counts] = await Promise.all([
      listInstances(ctx.redis, ctx.keys),
      Promise.all(
        (Object.keys(queueDefinitions) as QueueKey[]).map(async (key) => {
          const perPartition = await Promise.all(ctx.queues.everywhere(key).map((q) => q.getWorkersCount()));
          return [queueDefinitions[key].name, perPartition.reduce((a, b) => a + b, 0)] as const;
        }),
      ),
    ]);
    for (const role of roles) instances.set({ role }, live.filter((i) => i.roles.includes(role)).length);
    for (const [queue, n] of counts) workers.set({ queue }, n);
    for (const [setting, n] of Object.entries(settingVariants(live))) variants.set({ setting }, n);
  });
}
