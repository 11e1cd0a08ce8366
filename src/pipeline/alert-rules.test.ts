import { describe, expect, it } from 'vitest';
import { evaluateAlerts } from './alert-rules.js';

const t = { alertOutflowSpikeFactor: 3, alertOutflowMin: 20, alertLiquidityLevel: 0.8, alertLiquidityMinInflow: 10 };
const rules = (hour: { inflow: number; outflow: number }, baseline: number | null) => evaluateAlerts(hour, baseline, t).map((a) => a.rule);

describe('alert rules', () => {
  it.each([
    // inflow, outflow, baseline, rules
    [100, 31, 10, ['outflow_spike']],
    [100, 30, 10, []], // not above 3x
    [100, 19, 1, []], // below the minimum outflow
    [100, 40, null, []], // no previous hours: no baseline
    [100, 20, 0, ['outflow_spike']], // any outflow above a zero baseline, once the minimum is reached
    [20, 17, null, ['high_liquidity']],
    [20, 16, null, []], // 0.8 is not above 0.8
    [9, 9, null, []], // too little inflow to judge liquidity
    [0, 50, null, []],
    [30, 40, 5, ['outflow_spike', 'high_liquidity']],
  ] as const)('inflow %d, outflow %d, baseline %o → %o', (inflow, outflow, baseline, expected) => {
    expect(rules({ inflow, outflow }, baseline)).toEqual(expected);
  });

  it('describes value and threshold', () => {
    const [spike] = evaluateAlerts({ inflow: 100, outflow: 70 }, 10, t);
    expect(spike).toMatchObject({ rule: 'outflow_spike', value: 70, threshold: 30, severity: 'critical' });
    const [liq] = evaluateAlerts({ inflow: 10, outflow: 9 }, null, t);
    expect(liq).toMatchObject({ rule: 'high_liquidity', value: 0.9, threshold: 0.8, severity: 'warning' });
  });
});
