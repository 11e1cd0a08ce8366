import { describe, expect, it } from 'vitest';
import { dueAfterIntervalChange, dueAt, nextAfterFailure, nextAfterSuccess, refreshSpacingMs } from './next-refresh.js';

const MIN = 60_000;
const now = new Date('2026-01-01T12:00:00Z');

describe('refreshSpacingMs', () => {
  it.each([
    // interval, errors, cap, expected minutes
    [30, 0, 1440, 30],
    [30, 1, 1440, 60],
    [30, 2, 1440, 120],
    [30, 5, 1440, 960],
    [30, 6, 1440, 1440], // 1920 capped at 24 h
    [30, 60, 1440, 1440],
    [1440, 3, 1440, 1440], // never below the interval, never above the cap
    [1440, 3, 60, 1440], // a cap below the interval leaves the interval
  ])('interval %i min, %i errors, cap %i min → %i min', (interval, errors, cap, expected) => {
    expect(refreshSpacingMs(interval, errors, cap)).toBe(expected * MIN);
  });
});

describe('next refresh', () => {
  it('is one interval after a success', () => {
    expect(nextAfterSuccess(now, 30).getTime() - now.getTime()).toBe(30 * MIN);
  });

  it('backs off after failures, and a longer Retry-After wins', () => {
    expect(nextAfterFailure(now, 30, 1, 1440).getTime() - now.getTime()).toBe(60 * MIN);
    expect(nextAfterFailure(now, 30, 1, 1440, 2 * 3600_000).getTime() - now.getTime()).toBe(120 * MIN);
    expect(nextAfterFailure(now, 30, 1, 1440, 1000).getTime() - now.getTime()).toBe(60 * MIN);
  });

  it('is due at once for a new feed, one interval after the last fetch otherwise', () => {
    expect(dueAt({ refreshIntervalMinutes: 30, errorCount: 0, lastFetchedAt: null, nextRefreshAt: null }, now)).toEqual(now);
    const last = new Date(now.getTime() - 10 * MIN);
    expect(dueAt({ refreshIntervalMinutes: 30, errorCount: 0, lastFetchedAt: last, nextRefreshAt: null }, now).getTime()).toBe(now.getTime() + 20 * MIN);
  });

  it('keeps the backoff time of a failing feed', () => {
    const backoffUntil = new Date(now.getTime() + 45 * MIN);
    expect(dueAt({ refreshIntervalMinutes: 30, errorCount: 2, lastFetchedAt: null, nextRefreshAt: backoffUntil }, now)).toEqual(backoffUntil);
  });

  it('moves the due time when the interval changes', () => {
    const last = new Date(now.getTime() - 10 * MIN);
    const healthy = { refreshIntervalMinutes: 60, errorCount: 0, lastFetchedAt: last, nextRefreshAt: null };
    expect(dueAfterIntervalChange(healthy, 30, 1440, now).getTime()).toBe(now.getTime() + 50 * MIN);
    // failed 5 min ago with 1 error at 30 min (due in 55 min); now 10 min → 2 × 10 = 20 min after the failure
    const failing = { refreshIntervalMinutes: 10, errorCount: 1, lastFetchedAt: null, nextRefreshAt: new Date(now.getTime() + 55 * MIN) };
    expect(dueAfterIntervalChange(failing, 30, 1440, now).getTime()).toBe(now.getTime() + 15 * MIN);
  });
});
