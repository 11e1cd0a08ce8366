import type { PlatformContext, RoleHandle } from '../context.js';

/** The pipeline and scheduler role. Placeholder until the pipeline issue lands: starts and stops cleanly. */
export async function startPipelineRole(_ctx: PlatformContext): Promise<RoleHandle> {
  return { name: 'pipeline', queues: [], stop: async () => undefined };
}
