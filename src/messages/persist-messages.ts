/**
 * The persist worker's job processor (write-behind, the reference's Kafka consumer).
 *
 * A job names a buffer to drain (added by the API when a message lands in an empty buffer, or a
 * follow-up of a drain that used up its time budget) or none (the periodic sweep: every buffer).
 * A buffer another drain holds is left to it; that drain goes on until the buffer is empty.
 *
 * Delivering a job twice, or retrying one that died after its INSERT, writes each message once:
 * the batch stays in the buffer until it is written and the INSERT skips stored message ids.
 * A database that cannot be reached delays the job (BlockedError: no attempt is spent), the
 * batch waits in its buffer, so an outage of any length loses nothing; any other failure is
 * retried with the queue's backoff.
 */
import { BlockedError } from '../errors.js';
import type { JobProcessor } from '../queues/create-worker.js';
import type { QueueRegistry } from '../queues/registry.js';
import { drainBuffer, type DrainDeps } from './drain-buffer.js';
import { isDatabaseUnavailable } from './message-store.js';

export const DB_DOWN_RETRY_MS = 2000;
/** How long one job drains one buffer before it hands over to a follow-up job. */
export const DRAIN_BUDGET_MS = 5000;

export interface PersistDeps extends DrainDeps {
  queues: QueueRegistry;
  shards: number;
  onInserted?: (rows: number) => void;
}

export function persistProcessor(deps: PersistDeps): JobProcessor<'messagePersist', { drained: number; inserted: number }> {
  return async (job) => {
    const shard = job.data.shard;
    const shards = shard === undefined ? Array.from({ length: deps.shards }, (_, s) => s) : shard < deps.shards ? [shard] : [];
    const total = { drained: 0, inserted: 0 };
    for (const s of shards) {
      try {
        const outcome = await drainBuffer(deps, s, DRAIN_BUDGET_MS);
        total.drained += outcome.drained;
        total.inserted += outcome.inserted;
        deps.onInserted?.(outcome.inserted);
        if (outcome.more) await deps.queues.add('messagePersist', 'drain', { shard: s }, { removeOnComplete: true });
      } catch (err) {
        if (isDatabaseUnavailable(err)) throw new BlockedError(`database unavailable: ${(err as Error).message}`, DB_DOWN_RETRY_MS, 'database_unavailable');
        throw err;
      }
    }
    return total;
  };
}
