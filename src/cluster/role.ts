import type { PlatformContext, RoleHandle } from '../context.js';

/** The cluster role. Placeholder until the cluster coordination issue lands: starts and stops cleanly. */
export async function startClusterRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'cluster', queues: [], stop: async () => undefined };
}
