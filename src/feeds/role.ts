import type { PlatformContext, RoleHandle } from '../context.js';

/** The feeds worker role. Placeholder until the feed refresh issue lands: starts and stops cleanly. */
export async function startFeedsRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'feeds', queues: [], stop: async () => undefined };
}
