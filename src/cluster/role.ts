/**
 * The cluster role: competes for the `cluster` lease (its holder is "the leader") and, while it
 * holds it, runs the cluster's singleton work:
 *   - shared config generation: every CONFIG_REFRESH_INTERVAL_MS (publish-shared-config.ts);
 *   - registry cleanup: every INSTANCE_TTL_MS/2, trims instances not heard from for a TTL.
 * The lease, the registry heartbeat and the config follower themselves run in every process
 * (src/cluster/coordination.ts, wired by the runtime).
 */
import type { PlatformContext, RoleHandle } from '../context.js';
import { computeSharedConfig } from './compute-shared-config.js';
import { trimRegistry } from './instance-registry.js';
import { CLUSTER_WORK } from './lease-manager.js';
import { publishSharedConfig } from './publish-shared-config.js';
import { SharedConfigStore } from './shared-config-store.js';
import { startTermLoop } from './term-loop.js';
import { toError } from '../errors.js';

export async function startClusterRole(ctx: PlatformContext): Promise<RoleHandle> {
  const logger = ctx.logger.child({ role: 'cluster' });
  const settings = ctx.config.cluster;
  const publishDeps = {
    store: new SharedConfigStore(ctx.redis, ctx.keys),
    compute: () => computeSharedConfig(ctx.db.prisma),
    sharedConfig: ctx.sharedConfig,
    instanceId: ctx.instanceId,
    ttlMs: settings.configTtlSeconds * 1000,
    logger,
  };
  const stops = new Set<() => Promise<void>>();

  ctx.leadership.whileLeader(CLUSTER_WORK, async (term) => {
    const stopPublishing = startTermLoop(
      term,
      settings.configRefreshIntervalMs,
      async () => {
        await publishSharedConfig(publishDeps, term);
      },
      (err) => logger.warn({ err: toError(err).message }, 'shared config generation failed; next round retries'),
    );
    const stopCleanup = startTermLoop(
      term,
      Math.max(500, Math.floor(settings.instanceTtlMs / 2)),
      async () => {
        const removed = await trimRegistry(ctx.redis, ctx.keys, settings.instanceTtlMs);
        if (removed) logger.info({ removed }, 'instance registry: trimmed instances not heard from');
      },
      (err) => logger.warn({ err: toError(err).message }, 'instance registry cleanup failed; next round retries'),
    );
    const stop = async () => {
      stops.delete(stop);
      await Promise.all([stopPublishing(), stopCleanup()]);
    };
    stops.add(stop);
    return stop;
  });

  let stopping: Promise<void> | undefined;
  return {
    name: 'cluster',
    queues: [],
    // The lease itself is released by the leadership after the roles have stopped.
    stop: () => (stopping ??= Promise.all([...stops].map((s) => s())).then(() => undefined)),
  };
}
