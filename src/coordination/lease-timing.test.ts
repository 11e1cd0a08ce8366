import { describe, expect, it } from 'vitest';
import { localDeadline, nextAttemptDelayMs, renewEveryMs, retryDelayMs, safetyMarginMs } from './lease-timing.js';

describe('lease timing', () => {
  it.each([
    // ttl, renew every, margin, deadline after a renewal sent at 1000
    [60_000, 20_000, 6000, 55_000],
    [3000, 1000, 300, 3700],
    [1000, 333, 100, 1900],
    [300, 100, 50, 1250],
  ])('TTL %i ms: renew every %i ms, margin %i ms, deadline %i', (ttl, every, margin, deadline) => {
    expect(renewEveryMs(ttl)).toBe(every);
    expect(safetyMarginMs(ttl)).toBe(margin);
    expect(localDeadline(1000, ttl)).toBe(deadline);
    // The holder always gets to renew at least twice before its deadline.
    expect(localDeadline(0, ttl)).toBeGreaterThan(2 * renewEveryMs(ttl));
  });

  it.each([
    [3000, 2900, 1000], // fresh holder: try again at the regular period
    [3000, 400, 405], // holder about to expire: try right after it does
    [3000, 0, 5],
    [3000, -1, 1000], // no TTL known
  ])('TTL %i, holder PTTL %i → next attempt in %i ms', (ttl, pttl, delay) => {
    expect(nextAttemptDelayMs(ttl, pttl)).toBe(delay);
  });

  it('retries a failed command well before the deadline', () => {
    expect(retryDelayMs(3000)).toBe(300);
    expect(retryDelayMs(200)).toBe(50);
  });
});
