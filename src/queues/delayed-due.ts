/**
 * When a delayed job is due, as BullMQ itself decides it: the job's score in the queue's delayed
 * set, which BullMQ writes as `dueAt * 0x1000 + n` (n keeps jobs due in the same millisecond in
 * order). Unlike `timestamp + delay`, this is right for a job that was moved (moveToDelayed, a
 * domain's turn), retried with backoff or promoted.
 */
import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';

export function dueAtOfScore(score: string | number): number {
  return Math.floor(Number(score) / 0x1000);
}

/** The due time (ms) of each of `ids` in `queue`'s delayed set; null for an id not delayed. */
export async function delayedDueAt(redis: RedisClient, queue: Queue, ids: string[]): Promise<(number | null)[]> {
  if (!ids.length) return [];
  const scores = (await redis.zmscore(queue.keys.delayed!, ...ids)) as (string | null)[];
  return scores.map((s) => (s === null ? null : dueAtOfScore(s)));
}
