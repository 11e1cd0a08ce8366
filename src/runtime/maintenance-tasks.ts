/**
 * Every periodic task of the platform, run by the leader on the `maintenance` queue (one job
 * scheduler each, job name = task name; src/queues/maintenance-worker.ts). A domain defines its
 * tasks; a new one is added to this list. Every task can run in any process (each builds what
 * it needs from the context), so whichever process leads runs them all.
 */
import { clusterMaintenanceTasks } from '../cluster/maintenance-tasks.js';
import type { PlatformContext } from '../context.js';
import { feedMaintenanceTasks } from '../feeds/maintenance-tasks.js';
import { crawlMaintenanceTasks } from '../pipeline/maintenance-tasks.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';

export function maintenanceTasks(ctx: PlatformContext): MaintenanceTask[] {
  return [...clusterMaintenanceTasks(ctx), ...crawlMaintenanceTasks(ctx), ...feedMaintenanceTasks(ctx)];
}
