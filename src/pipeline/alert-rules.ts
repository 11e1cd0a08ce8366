/**
 * Alert rules over an IP's hourly stats. Pure. Each rule fires at most once per IP and hour
 * (the alerts table is unique on ip, rule and hour; the pipeline inserts with ON CONFLICT DO NOTHING).
 *
 *   outflow_spike   the hour's outflow ≥ ALERT_OUTFLOW_MIN and > factor × the average outflow
 *                   of the previous ALERT_BASELINE_HOURS hours that have stats (no baseline → no alert)
 *   high_liquidity  the hour's inflow ≥ ALERT_LIQUIDITY_MIN_INFLOW and outflow / inflow > level
 */

export interface AlertThresholds {
  alertOutflowSpikeFactor: number;
  alertOutflowMin: number;
  alertLiquidityLevel: number;
  alertLiquidityMinInflow: number;
}

export interface HourStats {
  inflow: number;
  outflow: number;
}

export interface AlertCandidate {
  rule: 'outflow_spike' | 'high_liquidity';
  severity: 'warning' | 'critical';
  message: string;
  value: number;
  threshold: number;
}

export function evaluateAlerts(hour: HourStats, baselineOutflow: number | null, t: AlertThresholds): AlertCandidate[] {
  const alerts: AlertCandidate[] = [];
  if (baselineOutflow !== null && hour.outflow >= t.alertOutflowMin) {
    const threshold = baselineOutflow * t.alertOutflowSpikeFactor;
    if (hour.outflow > threshold) {
      alerts.push({
        rule: 'outflow_spike',
        severity: hour.outflow > threshold * 2 ? 'critical' : 'warning',
        message: `outflow ${hour.outflow} this hour is above ${t.alertOutflowSpikeFactor}x the previous hours' average (${round2(baselineOutflow)})`,
        value: hour.outflow,
        threshold: round2(threshold),
      });
    }
  }
  if (hour.inflow > 0 && hour.inflow >= t.alertLiquidityMinInflow) {
    const liquidity = hour.outflow / hour.inflow;
    if (liquidity > t.alertLiquidityLevel) {
      alerts.push({
        rule: 'high_liquidity',
        severity: 'warning',
        message: `liquidity index ${round2(liquidity)} (outflow ${hour.outflow} / inflow ${hour.inflow}) is above ${t.alertLiquidityLevel}`,
        value: round4(liquidity),
        threshold: t.alertLiquidityLevel,
      });
    }
  }
  return alerts;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
