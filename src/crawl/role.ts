import type { PlatformContext, RoleHandle } from '../context.js';

/** The crawler worker role. Placeholder until the crawler issue lands: starts and stops cleanly. */
export async function startCrawlerRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'crawler', queues: [], stop: async () => undefined };
}
