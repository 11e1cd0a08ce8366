import type { PlatformContext, RoleHandle } from '../context.js';
import type { DependencyProbe } from '../http/app.js';
import { startFeedsRole } from '../feeds/role.js';
import { startMessagesRole } from '../messages/role.js';
import { startPipelineRole } from '../pipeline/role.js';
import { startPoolsRole } from '../pools/role.js';
import { startApiRole } from './api-role.js';
import { startClusterRole } from './cluster-role.js';
import { startCrawler } from './crawler-role.js';
import { exportFleetMetrics } from './fleet-metrics.js';
import { maintenanceTasks } from './maintenance-tasks.js';
import { ROLE_NAMES, type RoleName } from './role-names.js';

export { parseRoles, ROLE_NAMES, type RoleName } from './role-names.js';

/** What a role may need of its process beyond the context: the readiness probes of its HTTP server (readiness.ts). */
export interface ProcessFacts {
  probes: DependencyProbe[];
}

export const roleStarters: Record<RoleName, (ctx: PlatformContext, process: ProcessFacts) => Promise<RoleHandle>> = {
  cluster: (ctx) => {
    exportFleetMetrics(ctx, ROLE_NAMES);
    return startClusterRole(ctx, maintenanceTasks(ctx));
  },
  feeds: startFeedsRole,
  crawler: startCrawler,
  pipeline: startPipelineRole,
  pools: startPoolsRole,
  messages: startMessagesRole,
  api: (ctx, process) => startApiRole(ctx, process.probes),
};
