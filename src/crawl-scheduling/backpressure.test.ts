import { describe, expect, it } from 'vitest';
import { planBackpressure } from './backpressure.js';

const now = 1_000_000;
const due = (n: number) => Array.from({ length: n }, (_, i) => ({ jobId: `j${i}`, dueAt: now + i }));
const base = { now, threshold: 25, batchSize: 50, lookAheadMs: 2000, slotMs: 40 };

describe('backpressure plan', () => {
  it('releases everything while below the threshold', () => {
    expect(planBackpressure({ ...base, waiting: 0, due: due(10) })).toEqual({ release: 10, holdBack: [] });
  });

  it('releases up to threshold - waiting and pushes the rest past the window, in order, one slot apart', () => {
    const plan = planBackpressure({ ...base, waiting: 20, due: due(8) });
    expect(plan.release).toBe(5);
    expect(plan.holdBack).toEqual([
      { jobId: 'j5', dueAt: now + 2000 + 40 },
      { jobId: 'j6', dueAt: now + 2000 + 80 },
      { jobId: 'j7', dueAt: now + 2000 + 120 },
    ]);
  });

  it('holds back every due crawl when the queue is at or over the threshold', () => {
    expect(planBackpressure({ ...base, waiting: 30, due: due(3) }).holdBack.map((h) => h.jobId)).toEqual(['j0', 'j1', 'j2']);
    expect(planBackpressure({ ...base, waiting: 25, due: due(1) }).release).toBe(0);
  });

  it('releases at most one batch per tick', () => {
    const plan = planBackpressure({ ...base, threshold: 1000, waiting: 0, due: due(120) });
    expect(plan.release).toBe(50);
    expect(plan.holdBack).toHaveLength(70);
  });
});
