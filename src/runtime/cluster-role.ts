/**
 * The cluster role: competes for the lease of LEADER_TASK (its holder is "the leader") and, while
 * it holds it, runs the platform's periodic work: the `maintenance` queue's job schedulers and
 * worker (src/coordination/maintenance-worker.ts), with the tasks the runtime lists
 * (maintenance-tasks.ts: the coordination's shared config publication and registry trim, the
 * crawl and feed reconciliations, the retention trims).
 * The leases, the registry heartbeat and the config follower themselves run in every process
 * (src/coordination/coordination.ts, wired by start-platform.ts).
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { LEADER_TASK } from '../coordination/leadership.js';
import type { MaintenanceTask } from '../coordination/maintenance-task.js';
import { maintenanceMetrics, startMaintenance } from '../coordination/maintenance-worker.js';

export async function startClusterRole(ctx: PlatformContext, tasks: readonly MaintenanceTask[]): Promise<RoleHandle> {
  maintenanceMetrics(ctx.metrics);
  const stops = new Set<() => Promise<void>>();
  ctx.leadership.whileLeader(LEADER_TASK, async (term) => {
    const stopMaintenance = await startMaintenance(ctx, tasks, term);
    const stop = async () => {
      stops.delete(stop);
      await stopMaintenance();
    };
    stops.add(stop);
    return stop;
  });

  let stopping: Promise<void> | undefined;
  return {
    name: 'cluster',
    queues: [],
    // The lease itself is released by the leadership after the roles have stopped.
    stop: () => (stopping ??= Promise.all([...stops].map((s) => s())).then(() => undefined)),
  };
}
