import { describe, expect, it } from 'vitest';
import { OUTAGE_FIRST_DELAY_MS, OUTAGE_MAX_DELAY_MS, OutageBackoff } from './outage-backoff.js';

describe('OutageBackoff', () => {
  it('doubles per outage of one job up to the cap, the first one marked', () => {
    const b = new OutageBackoff(0);
    const delays = Array.from({ length: 8 }, () => b.next('j'));
    expect(delays.map((d) => d.delayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(delays.map((d) => d.first)).toEqual([true, false, false, false, false, false, false, false]);
    expect(b.next('other')).toEqual({ delayMs: OUTAGE_FIRST_DELAY_MS, first: true });
  });

  it('starts again once the job ended', () => {
    const b = new OutageBackoff(0);
    b.next('j');
    b.next('j');
    b.forget('j');
    expect(b.next('j')).toEqual({ delayMs: OUTAGE_FIRST_DELAY_MS, first: true });
  });

  it('takes at most the jitter fraction off', () => {
    const b = new OutageBackoff(0.5);
    for (let i = 0; i < 50; i++) {
      const { delayMs } = b.next(`j${i}`);
      expect(delayMs).toBeGreaterThanOrEqual(OUTAGE_FIRST_DELAY_MS / 2);
      expect(delayMs).toBeLessThanOrEqual(OUTAGE_FIRST_DELAY_MS);
    }
    const capped = new OutageBackoff(0.5);
    for (let i = 0; i < 20; i++) capped.next('k');
    expect(capped.next('k').delayMs).toBeLessThanOrEqual(OUTAGE_MAX_DELAY_MS);
  });
});
