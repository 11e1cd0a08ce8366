import { describe, expect, it } from 'vitest';
import { SequenceClock } from './sequence-clock.js';

describe('SequenceClock', () => {
  it('follows the clock in microseconds', () => {
    let now = 1_700_000_000_000;
    const clock = new SequenceClock(() => now);
    expect(clock.next()).toBe(1_700_000_000_000_000);
    now += 5;
    expect(clock.next()).toBe(1_700_000_000_005_000);
  });

  it('is strictly increasing within one millisecond and when the clock steps back', () => {
    let now = 1_700_000_000_000;
    const clock = new SequenceClock(() => now);
    const a = clock.next();
    const b = clock.next();
    now -= 1000;
    const c = clock.next();
    expect([b - a, c - b]).toEqual([1, 1]);
  });

  it('moves past a sequence number observed in a read, and never back', () => {
    const clock = new SequenceClock(() => 1_700_000_000_000);
    clock.observe(1_700_000_009_000_000);
    expect(clock.next()).toBe(1_700_000_009_000_001);
    clock.observe(5);
    clock.observe(Number.NaN);
    expect(clock.next()).toBe(1_700_000_009_000_002);
  });
});
