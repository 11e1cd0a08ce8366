/**
 * Backpressure plan for one tick of the scheduler loop. Pure.
 *
 * BullMQ promotes a delayed crawl to waiting by itself when it falls due, so holding crawls back
 * has to happen before that: each tick the leader looks at the crawls due within the look-ahead
 * window (earliest first) and at how many crawl jobs already wait. Up to
 * min(threshold - waiting, batchSize) of the due crawls may become waiting; every other one is
 * pushed back past the window, spread one slot apart in due order, so the held-back crawls keep
 * their order and the next ticks release them batch by batch. Nothing is dropped.
 */

export interface DueCrawl {
  jobId: string;
  /** Epoch ms at which BullMQ will promote it. */
  dueAt: number;
}

export interface BackpressureInput {
  now: number;
  /** Crawl jobs waiting (waiting + prioritized) right now. */
  waiting: number;
  /** Delayed crawls due before now + lookAheadMs, earliest first. */
  due: readonly DueCrawl[];
  threshold: number;
  batchSize: number;
  lookAheadMs: number;
  /** Gap between two held-back crawls (the window a tick can release, over the batch). */
  slotMs: number;
}

export interface BackpressurePlan {
  release: number;
  /** Crawls to push back, with their new due time. */
  holdBack: { jobId: string; dueAt: number }[];
}

export function planBackpressure(input: BackpressureInput): BackpressurePlan {
  const budget = Math.max(0, Math.min(input.threshold - input.waiting, input.batchSize));
  const excess = input.due.slice(budget);
  const base = input.now + input.lookAheadMs;
  return {
    release: Math.min(budget, input.due.length),
    holdBack: excess.map((c, i) => ({ jobId: c.jobId, dueAt: Math.max(c.dueAt, base + (i + 1) * input.slotMs) })),
  };
}
