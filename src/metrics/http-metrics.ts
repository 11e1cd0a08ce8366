/**
 * The per-request HTTP metrics, `wp_http_requests_total{method,route,status}` and the
 * `wp_http_request_duration_seconds{method,route}` histogram, kept as plain numbers and turned
 * into Prometheus values only when scraped.
 *
 * prom-client validates and hashes the labels on every inc/observe (a labelled child too): about
 * 1.5 µs a request for the two, on every request of the hottest routes. Here a request finds its
 * record through three map lookups on strings it already holds (route, method) and a number
 * (status) and adds to it. The exposition is prom-client's own (the registry formats what `get`
 * returns, as for its Counter and Histogram; the unit test compares both byte for byte).
 */
import type { Metric, Registry } from 'prom-client';

interface Timing {
  labels: { method: string; route: string };
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

interface Outcome {
  labels: { method: string; route: string; status: string };
  count: number;
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  /** For the text exposition the registry puts `labels` first, then these (as prom-client's histograms do). */
  sharedLabels?: Record<string, string>;
  metricName?: string;
}

export class HttpMetrics {
  /** route → method → the duration record and the counts by status. */
  private readonly byRoute = new Map<string, Map<string, { timing: Timing; outcomes: Map<number, Outcome> }>>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
    names = { requests: 'wp_http_requests_total', duration: 'wp_http_request_duration_seconds' },
  ) {
    const requests = {
      name: names.requests,
      help: 'HTTP requests by method, route and status.',
      type: 'counter',
      get: async () => ({ name: names.requests, help: requests.help, type: 'counter', aggregator: 'sum', values: this.requestValues() }),
    };
    const duration = {
      name: names.duration,
      help: 'HTTP request duration by method and route.',
      type: 'histogram',
      getForPromString: async () => ({
        name: names.duration,
        help: duration.help,
        type: 'histogram',
        aggregator: 'sum',
        values: this.durationValues(names.duration),
      }),
      // JSON (getMetricsAsJSON) has every label in `labels`, as prom-client's histograms give it.
      get: async () => {
        const data = await duration.getForPromString();
        return { ...data, values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
      },
    };
    // The registry needs name, type and get() (what it formats); prom-client's types know only its own classes.
    registry.registerMetric(requests as unknown as Metric);
    registry.registerMetric(duration as unknown as Metric);
  }

  /** One answered request. */
  record(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let entry = byMethod.get(method);
    if (!entry) {
      entry = { timing: { labels: { method, route }, buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }, outcomes: new Map() };
      byMethod.set(method, entry);
    }
    let outcome = entry.outcomes.get(status);
    if (!outcome) entry.outcomes.set(status, (outcome = { labels: { method, route, status: String(status) }, count: 0 }));
    outcome.count += 1;
    const timing = entry.timing;
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    timing.buckets[i]! += 1;
    timing.sum += seconds;
    timing.count += 1;
  }

  private *entries() {
    for (const byMethod of this.byRoute.values()) yield* byMethod.values();
  }

  private requestValues(): MetricValue[] {
    const values: MetricValue[] = [];
    for (const { outcomes } of this.entries()) for (const o of outcomes.values()) values.push({ value: o.count, labels: { ...o.labels } });
    return values;
  }

  /** As prom-client's Histogram: per label set the cumulative `_bucket`s (`le`), `+Inf`, `_sum`, `_count`. */
  private durationValues(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    for (const { timing } of this.entries()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += timing.buckets[i]!;
        values.push({ value: cumulative, labels: { le }, sharedLabels: timing.labels, metricName: `${name}_bucket` });
      });
      values.push({ value: timing.count, labels: { le: '+Inf' }, sharedLabels: timing.labels, metricName: `${name}_bucket` });
      values.push({ value: timing.sum, labels: {}, sharedLabels: timing.labels, metricName: `${name}_sum` });
      values.push({ value: timing.count, labels: {}, sharedLabels: timing.labels, metricName: `${name}_count` });
    }
    return values;
  }
}
