import type { PlatformContext, RoleHandle } from '../context.js';

/** The message persist role. Placeholder until the message cache issue lands: starts and stops cleanly. */
export async function startMessagesRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'messages', queues: [], stop: async () => undefined };
}
