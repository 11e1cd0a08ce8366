/**
 * Every periodic task of the platform, run by the leader on the `maintenance` queue (one job
 * scheduler each, job name = task name; src/queues/maintenance-worker.ts). A domain (or the
 * coordination) defines its tasks; a new one is added to this list. Every task can run in any
 * process (each builds what it needs from the context), so whichever process leads runs them all.
 */
import type { PlatformContext } from '../context.js';
import { coordinationMaintenanceTasks } from '../coordination/maintenance-tasks.js';
import { feedMaintenanceTasks } from '../feeds/maintenance-tasks.js';
import { crawlSchedulingMaintenanceTasks } from '../crawl-scheduling/maintenance-tasks.js';
import { pipelineMaintenanceTasks } from '../pipeline/maintenance-tasks.js';
import { wirePipeline } from '../pipeline/wiring.js';
import type { MaintenanceTask } from '../queues/maintenance-task.js';
import { sharedConfigContent } from './shared-config-content.js';

export function maintenanceTasks(ctx: PlatformContext): MaintenanceTask[] {
  const coordination = coordinationMaintenanceTasks({
    settings: ctx.config.cluster,
    redis: ctx.redis,
    keys: ctx.keys,
    instanceId: ctx.instanceId,
    sharedConfig: ctx.sharedConfig,
    computeSharedConfig: sharedConfigContent(ctx.db),
  });
  const crawl = wirePipeline(ctx);
  return [...coordination, ...crawlSchedulingMaintenanceTasks(ctx, crawl), ...pipelineMaintenanceTasks(ctx, crawl.results), ...feedMaintenanceTasks(ctx)];
}
