/**
 * The queue layouts in use, recorded in Redis so that a change of QUEUE_SHARDS loses nothing:
 * every process adds its own partition count to a set when it starts and reads the others back.
 * Partitions of a recorded layout other than the current one are drained (consumed, searched,
 * never added to) until they are empty: no job to run and no dead job (a dead job there stays in
 * the dead-job console until it is replayed, removed or expires); a start that finds an older
 * layout empty forgets it.
 *
 * A process notices an older layout at its start: a process still running with the old count
 * when the new ones start keeps draining its own partitions; jobs it adds after a newer process
 * found that layout empty and forgot it are re-recorded by its next start (and a chain's job left
 * there meanwhile is re-added in the current layout by the reconcilers, which never see it).
 */
import type { JobType } from 'bullmq';
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { PENDING_STATES } from './job-states.js';
import { QueueLayout, type LayoutOptions } from './layout.js';
import type { QueueRegistry } from './registry.js';

/** What keeps an older layout: jobs still to run, and dead jobs (the console must still find, replay or remove them). */
const KEPT = [...new Set([...PENDING_STATES, 'active', 'paused', 'failed'])];

/** Records this process's layout and returns it with the older layouts still holding jobs. */
export async function recordLayout(
  deps: { redis: RedisClient; keys: Keys; logger: Logger; registryFor: (layout: QueueLayout) => QueueRegistry },
  options: Omit<LayoutOptions, 'older'>,
): Promise<QueueLayout> {
  const key = deps.keys.queueLayouts();
  await deps.redis.sadd(key, String(options.shards));
  const older = (await deps.redis.smembers(key)).map(Number).filter((n) => Number.isInteger(n) && n > 0 && n !== options.shards);
  if (!older.length) return new QueueLayout(options);

  const keep: number[] = [];
  for (const n of older) {
    const probe = deps.registryFor(new QueueLayout({ ...options, older: [n] }));
    try {
      // A job scheduler (the message sweep) in an older partition would keep adding jobs there:
      // its work is scheduled by the current layout's own scheduler.
      const draining = probe.layout.all().filter((t) => !t.current);
      for (const t of draining) {
        const q = probe.at(t);
        for (const s of await q.getJobSchedulers()) await q.removeJobScheduler(s.key);
      }
      const counts = await Promise.all(draining.map((t) => probe.at(t).getJobCounts(...(KEPT as JobType[]))));
      const left = counts.reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
      if (left > 0) {
        keep.push(n);
        deps.logger.info(
          { layout: n, current: options.shards, jobs: left },
          'queue layout of an earlier QUEUE_SHARDS still holds jobs (to run, or dead): draining it',
        );
      } else {
        await deps.redis.srem(key, String(n));
        deps.logger.info({ layout: n, current: options.shards }, 'queue layout of an earlier QUEUE_SHARDS is empty: forgotten');
      }
    } finally {
      await probe.close();
    }
  }
  return new QueueLayout({ ...options, older: keep });
}
