import { describe, expect, it } from 'vitest';
import { plannedDue, spreadDueTimes } from './due-times.js';

const now = 1_700_000_000_000;
const ago = (s: number) => new Date(now - s * 1000);

describe('due times', () => {
  it.each([
    [null, 3600, now], // never crawled: now
    [ago(600), 3600, now + 3000 * 1000], // crawled 10 min ago, 1 h interval
    [ago(7200), 3600, now], // overdue: now
  ])('last crawled %o, interval %d → %d', (lastCrawledAt, intervalSeconds, due) => {
    expect(plannedDue({ lastCrawledAt, intervalSeconds }, now)).toBe(due);
  });

  it('spreads the IPs due now over the window, oldest crawl first, and leaves future ones alone', () => {
    const due = spreadDueTimes(
      [
        { ipId: 1, lastCrawledAt: null, intervalSeconds: 3600 },
        { ipId: 2, lastCrawledAt: ago(600), intervalSeconds: 3600 },
        { ipId: 3, lastCrawledAt: ago(9000), intervalSeconds: 3600 },
        { ipId: 4, lastCrawledAt: null, intervalSeconds: 3600 },
      ],
      now,
      60_000,
    );
    expect([...due.entries()].sort((a, b) => a[0] - b[0])).toEqual([
      [1, now],
      [2, now + 3_000_000],
      [3, now + 40_000],
      [4, now + 20_000],
    ]);
  });

  it('puts a single due IP at now', () => {
    expect(spreadDueTimes([{ ipId: 9, lastCrawledAt: null, intervalSeconds: 1 }], now, 60_000).get(9)).toBe(now);
  });
});
