import { describe, expect, it } from 'vitest';
import { clampWeight, intervalSeconds, nextWeight } from './crawl-interval.js';

const weights = { weightMin: 0.1, weightMax: 10, weightDriftStep: 0.05 };
const intervals = { baseIntervalSeconds: 7200, minIntervalSeconds: 3600, maxIntervalSeconds: 7200 };

describe('weight rules', () => {
  it.each([
    // weight, inflow, outflow, next — speed up, slow down, drift towards 1.0
    [1.0, 501, 0, 1.25],
    [1.0, 0, 501, 1.25],
    [1.0, 500, 500, 1.0], // not above 500, not quiet: drift (already 1.0)
    [1.0, 249, 14, 0.9],
    [1.0, 249, 15, 1.0], // outflow not below 15: drift
    [1.0, 250, 0, 1.0], // inflow not below 250: drift
    [2.0, 300, 20, 1.95],
    [0.5, 300, 20, 0.55],
    [1.02, 300, 20, 1.0], // drift does not overshoot 1.0
    [0.98, 300, 20, 1.0],
    [10, 600, 0, 10], // bounded above
    [0.1, 0, 0, 0.1], // bounded below
    [0.15, 0, 0, 0.1],
    [1.3, 0, 0, 1.2], // slow-down wins over drift
  ])('weight %d with inflow %d, outflow %d → %d', (weight, inflow, outflow, next) => {
    expect(nextWeight(weight, { inflow, outflow }, weights)).toBe(next);
  });

  it('clamps weights into the bounds, even when they are given the wrong way round', () => {
    expect(clampWeight(20, weights)).toBe(10);
    expect(clampWeight(0.01, { ...weights, weightMin: 5, weightMax: 1 })).toBe(1);
  });
});

describe('interval = clamp(base / weight, min, max)', () => {
  it.each([
    // the reference's table (2.4)
    [4.0, 3600],
    [2.0, 3600],
    [1.5, 4800],
    [1.0, 7200],
    [0.5, 7200],
    [0, 7200],
  ])('weight %d → %d s', (weight, seconds) => {
    expect(intervalSeconds(weight, intervals)).toBe(seconds);
  });

  it('follows other bounds', () => {
    expect(intervalSeconds(3, { baseIntervalSeconds: 600, minIntervalSeconds: 60, maxIntervalSeconds: 3600 })).toBe(200);
    expect(intervalSeconds(0.1, { baseIntervalSeconds: 600, minIntervalSeconds: 60, maxIntervalSeconds: 3600 })).toBe(3600);
  });
});
