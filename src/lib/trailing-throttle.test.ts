import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrailingThrottle } from './trailing-throttle.js';

describe('TrailingThrottle', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs the first request at once, folds the rest of the interval into one trailing run', () => {
    vi.useFakeTimers();
    const throttle = new TrailingThrottle(100);
    const runs: number[] = [];
    const act = () => runs.push(Date.now());
    const start = Date.now();
    throttle.request('a', act); // t=0: runs
    vi.advanceTimersByTime(10);
    throttle.request('a', act); // folded
    throttle.request('a', act); // folded
    expect(runs.length).toBe(1);
    vi.advanceTimersByTime(90); // interval ends: the trailing run
    expect(runs.map((r) => r - start)).toEqual([0, 100]);
    vi.advanceTimersByTime(500);
    expect(runs.length).toBe(2);
    throttle.request('a', act); // idle again: runs at once
    expect(runs.length).toBe(3);
    throttle.close();
  });

  it('keeps keys apart and drops pending runs on close', () => {
    vi.useFakeTimers();
    const throttle = new TrailingThrottle(100);
    const runs: string[] = [];
    throttle.request('a', () => runs.push('a'));
    throttle.request('b', () => runs.push('b'));
    throttle.request('a', () => runs.push('a2'));
    throttle.close();
    vi.advanceTimersByTime(1000);
    throttle.request('a', () => runs.push('after-close'));
    expect(runs).toEqual(['a', 'b']);
  });

  it('with interval 0 runs every request', () => {
    const throttle = new TrailingThrottle(0);
    let n = 0;
    for (let i = 0; i < 5; i++) throttle.request('k', () => n++);
    expect(n).toBe(5);
  });
});
