import type { PlatformContext, RoleHandle } from '../context.js';
import { startFeedsRole } from '../feeds/role.js';
import { startMessagesRole } from '../messages/role.js';
import { startPipelineRole } from '../pipeline/role.js';
import { startPoolsRole } from '../pools/role.js';
import { startApiRole } from './api-role.js';
import { startClusterRole } from './cluster-role.js';
import { startCrawler } from './crawler-role.js';
import { maintenanceTasks } from './maintenance-tasks.js';
import type { RoleName } from './role-names.js';

export { parseRoles, ROLE_NAMES, type RoleName } from './role-names.js';

export const roleStarters: Record<RoleName, (ctx: PlatformContext) => Promise<RoleHandle>> = {
  cluster: (ctx) => startClusterRole(ctx, maintenanceTasks(ctx)),
  feeds: startFeedsRole,
  crawler: startCrawler,
  pipeline: startPipelineRole,
  pools: startPoolsRole,
  messages: startMessagesRole,
  api: startApiRole,
};
