import type { PlatformContext, RoleHandle } from '../context.js';

/** The pools worker role. Placeholder until the content pools issue lands: starts and stops cleanly. */
export async function startPoolsRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'pools', queues: [], stop: async () => undefined };
}
