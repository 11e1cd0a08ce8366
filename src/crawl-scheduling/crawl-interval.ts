/**
 * Weight and interval rules (reference: marketplace-crawler.md 2.4 and 4.5). Pure.
 *
 * After each crawl the IP's weight moves by what the crawl saw:
 *   inflow > 500 or outflow > 500     → weight + 0.25   (busy: crawl more often)
 *   inflow < 250 and outflow < 15     → weight − 0.1    (quiet: crawl less often)
 *   otherwise                         → weight drifts towards 1.0 by the drift step
 * and stays within [weightMin, weightMax]. The interval is BaseInterval / weight, clamped to
 * [MinInterval, MaxInterval].
 */

export interface WeightRules {
  weightMin: number;
  weightMax: number;
  weightDriftStep: number;
}

export interface IntervalRules {
  baseIntervalSeconds: number;
  minIntervalSeconds: number;
  maxIntervalSeconds: number;
}

const SPEED_UP_ABOVE = 500;
const SLOW_DOWN_INFLOW_BELOW = 250;
const SLOW_DOWN_OUTFLOW_BELOW = 15;
const SPEED_UP_STEP = 0.25;
const SLOW_DOWN_STEP = 0.1;

/** Rounds away float noise (0.1 + 0.2) so weights stay readable and comparable. */
const round = (n: number) => Math.round(n * 10_000) / 10_000;

export function clampWeight(weight: number, rules: WeightRules): number {
  const lo = Math.min(rules.weightMin, rules.weightMax);
  const hi = Math.max(rules.weightMin, rules.weightMax);
  return round(Math.min(hi, Math.max(lo, weight)));
}

export function nextWeight(weight: number, flow: { inflow: number; outflow: number }, rules: WeightRules): number {
  let next: number;
  if (flow.inflow > SPEED_UP_ABOVE || flow.outflow > SPEED_UP_ABOVE) next = weight + SPEED_UP_STEP;
  else if (flow.inflow < SLOW_DOWN_INFLOW_BELOW && flow.outflow < SLOW_DOWN_OUTFLOW_BELOW) next = weight - SLOW_DOWN_STEP;
  else if (weight > 1) next = Math.max(1, weight - rules.weightDriftStep);
  else next = Math.min(1, weight + rules.weightDriftStep);
  return clampWeight(next, rules);
}

export function intervalSeconds(weight: number, rules: IntervalRules): number {
  const raw = weight > 0 ? rules.baseIntervalSeconds / weight : rules.maxIntervalSeconds;
  return Math.round(Math.min(rules.maxIntervalSeconds, Math.max(rules.minIntervalSeconds, raw)));
}
