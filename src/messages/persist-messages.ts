/**
 * The persist worker's job processor (write-behind, the reference's Kafka consumer).
 *
 * A job names a buffer to drain (added by the API when a message lands in an empty buffer, by the
 * sweep, or as the follow-up of a drain that used up its time budget) or none: the periodic sweep,
 * which queues a drain for every buffer holding messages, so buffers drain side by side (the
 * worker runs MESSAGE_PERSIST_SHARDS + 1 jobs at once). A buffer another drain holds is left to
 * it; that drain goes on until the buffer is empty.
 *
 * Delivering a job twice, or retrying one that died after its INSERT, writes each message once:
 * the batch stays in the buffer until it is written and the INSERT skips stored message ids.
 * A database (or Redis) that cannot be reached delays the job without spending an attempt (the
 * worker factory does it for every queue); the batch waits in its buffer, so an outage of any
 * length loses nothing. Any other failure is retried with the queue's backoff.
 */
import type { JobProcessor } from '../queues/create-worker.js';
import type { QueueRegistry } from '../queues/registry.js';
import { drainBuffer, type DrainDeps } from './drain-buffer.js';

/** Drain jobs kept after they complete, so their rows show in Bull Board (a busy platform runs many). */
const DRAIN_RETENTION = { removeOnComplete: { count: 100 } } as const;

/** Asks for a drain of one buffer (every caller: the sweep, a follow-up, the write path, a requeue). */
export function requestDrain(queues: Pick<QueueRegistry, 'add'>, shard: number): Promise<unknown> {
  return queues.add('messagePersist', 'drain', { shard }, DRAIN_RETENTION, shard);
}
/** How long one job drains one buffer before it hands over to a follow-up job. */
export const DRAIN_BUDGET_MS = 5000;

export interface PersistDeps extends DrainDeps {
  queues: QueueRegistry;
  shards: number;
  onInserted?: (rows: number) => void;
}

export function persistProcessor(deps: PersistDeps): JobProcessor<'messagePersist', { drained: number; inserted: number; triggered: number }> {
  return async (job) => {
    const { shard } = job.data;
    if (shard === undefined) {
      // The sweep: a drain job for every buffer with messages in it, so the buffers drain side by side.
      // One add each, not addBulk: the drains are independent, and a single add survives the queue's
      // slot moving to a Redis Cluster master that has not seen BullMQ's scripts yet (ioredis loads
      // them on NOSCRIPT), where addBulk's MULTI fails.
      const lengths = await deps.buffer.lengths(deps.redis);
      const waiting = lengths.flatMap((n, s) => (n > 0 ? [s] : []));
      await Promise.all(waiting.map((s) => requestDrain(deps.queues, s)));
      if (waiting.length) await job.log(`buffers ${waiting.join(', ')} hold messages: a drain queued for each`);
      return { drained: 0, inserted: 0, triggered: waiting.length };
    }
    if (shard >= deps.shards) return { drained: 0, inserted: 0, triggered: 0 }; // a buffer of a larger MESSAGE_PERSIST_SHARDS
    // Progress is for people: a Redis hiccup while reporting must not fail the drain.
    const report = (o: { drained: number; inserted: number }) => job.updateProgress({ shard, drained: o.drained, inserted: o.inserted }).catch(() => undefined);
    const outcome = await drainBuffer(deps, shard, DRAIN_BUDGET_MS, report);
    deps.onInserted?.(outcome.inserted);
    await job
      .log(
        `buffer ${shard}: ${outcome.drained} messages drained, ${outcome.inserted} new rows${outcome.busy ? '; another drain holds the buffer' : ''}${outcome.more ? '; time budget spent, a follow-up drain queued' : ''}`,
      )
      .catch(() => undefined);
    if (outcome.more) await requestDrain(deps.queues, shard);
    return { drained: outcome.drained, inserted: outcome.inserted, triggered: outcome.more ? 1 : 0 };
  };
}
