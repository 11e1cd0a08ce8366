import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_POLICY, RestartBudget } from './restart-budget.js';

/** The delays of every attempt the budget grants after one death, until it gives up. */
function drain(budget: RestartBudget): number[] {
  const delays: number[] = [];
  for (let d = budget.next(); d !== undefined; d = budget.next()) delays.push(d);
  return delays;
}

describe('restart budget', () => {
  it('backs off doubling up to the cap, then gives up after the attempts of an episode', () => {
    const budget = new RestartBudget(DEFAULT_RESTART_POLICY, 0);
    budget.died(120_000);
    expect(drain(budget)).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(budget.next()).toBeUndefined();
    expect(budget.spent).toBe(8);
  });

  it('lasts longer than the 30 s a PostgreSQL backend may keep the old shared memory', () => {
    const budget = new RestartBudget(DEFAULT_RESTART_POLICY, 0);
    expect(drain(budget).reduce((a, b) => a + b, 0)).toBeGreaterThan(30_000);
  });

  it('starts a new episode when the service ran steadily since its last start', () => {
    const budget = new RestartBudget({ ...DEFAULT_RESTART_POLICY, attempts: 3, firstDelayMs: 100, maxDelayMs: 1000, steadyMs: 60_000 }, 0);
    budget.died(70_000);
    expect(budget.next()).toBe(100);
    expect(budget.next()).toBe(200);
    budget.started(71_000);
    budget.died(71_000 + 60_000);
    expect(drain(budget)).toEqual([100, 200, 400]);
  });

  it('continues the episode when the service dies again soon after a restart (a crash loop)', () => {
    const budget = new RestartBudget({ ...DEFAULT_RESTART_POLICY, attempts: 3, firstDelayMs: 100, maxDelayMs: 1000, steadyMs: 60_000 }, 0);
    budget.died(70_000);
    expect(budget.next()).toBe(100);
    budget.started(70_100);
    budget.died(75_000); // up only 5 s
    expect(drain(budget)).toEqual([200, 400]);
  });

  it('gives up at once with no attempts allowed', () => {
    const budget = new RestartBudget({ ...DEFAULT_RESTART_POLICY, attempts: 0 }, 0);
    budget.died(100_000);
    expect(budget.next()).toBeUndefined();
  });
});
