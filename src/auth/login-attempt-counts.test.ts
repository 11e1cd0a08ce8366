import { describe, expect, it } from 'vitest';
import { LoginAttemptCounts } from './login-attempt-counts.js';

const limits = { addressMax: 5, pairMax: 2, windowSeconds: 60 };

describe('LoginAttemptCounts (the login limit while Redis is down)', () => {
  it('counts an attempt only while both the address and the (name, address) pair are below their limits', () => {
    const counts = new LoginAttemptCounts(limits);
    const at = 1_000_000;
    expect(counts.count('a', 'a|ann', at)).toEqual({ allowed: true });
    expect(counts.count('a', 'a|ann', at)).toEqual({ allowed: true });
    expect(counts.count('a', 'a|ann', at + 1000)).toEqual({ allowed: false, retryAfterSeconds: 59 });
    // Other names from the address, until the address is spent: refused attempts counted nothing.
    for (const name of ['bob', 'cid', 'dan']) expect(counts.count('a', `a|${name}`, at)).toEqual({ allowed: true });
    expect(counts.count('a', 'a|eve', at)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    // Another address is not affected.
    expect(counts.count('b', 'b|ann', at)).toEqual({ allowed: true });
    // The window ends.
    expect(counts.count('a', 'a|eve', at + 60_000)).toEqual({ allowed: true });
  });

  it('takes an attempt back from both counts, never below zero', () => {
    const counts = new LoginAttemptCounts(limits);
    counts.count('a', 'a|ann', 0);
    counts.count('a', 'a|ann', 0);
    counts.giveBack('a', 'a|ann', 0);
    counts.giveBack('a', 'a|ann', 0);
    counts.giveBack('a', 'a|ann', 0);
    expect(counts.count('a', 'a|ann', 0)).toEqual({ allowed: true });
    expect(counts.count('a', 'a|ann', 0)).toEqual({ allowed: true });
    expect(counts.count('a', 'a|ann', 0).allowed).toBe(false);
  });

  it('holds a bounded number of counts: expired ones go first, then the oldest', () => {
    const counts = new LoginAttemptCounts(limits, 100);
    for (let i = 0; i < 100; i++) counts.count(`old-${i}`, `old-${i}|x`, 0);
    expect(counts.size).toBe(100);
    counts.count('new', 'new|x', 1000);
    expect(counts.size).toBeLessThanOrEqual(100);
    expect(counts.count('new', 'new|x', 1000)).toEqual({ allowed: true });
    // After the window every old count is expired and swept on the next insertion that needs room.
    for (let i = 0; i < 200; i++) counts.count(`later-${i}`, `later-${i}|x`, 120_000);
    expect(counts.size).toBeLessThanOrEqual(100);
  });
});
