import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpMetrics } from './http-metrics.js';

const BOUNDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** The same requests recorded by HttpMetrics and by prom-client's own Counter and Histogram. */
function both(requests: [method: string, route: string, status: number, seconds: number][]) {
  const ours = new Registry();
  const metrics = new HttpMetrics(ours, BOUNDS);
  const theirs = new Registry();
  const counter = new Counter({
    name: 'wp_http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [theirs],
  });
  const histogram = new Histogram({
    name: 'wp_http_request_duration_seconds',
    help: 'HTTP request duration by method and route.',
    labelNames: ['method', 'route'],
    buckets: BOUNDS,
    registers: [theirs],
  });
  for (const [method, route, status, seconds] of requests) {
    metrics.record(method, route, status, seconds);
    counter.labels(method, route, String(status)).inc();
    histogram.labels(method, route).observe(seconds);
  }
  return { ours, theirs };
}

describe('HttpMetrics', () => {
  const requests: [string, string, number, number][] = [
    ['POST', '/api/pools/:type/:groupId/pop', 200, 0.0004],
    ['POST', '/api/pools/:type/:groupId/pop', 200, 0.001], // on a bound: counted in that bucket
    ['POST', '/api/pools/:type/:groupId/pop', 404, 0.0031],
    ['GET', '/api/queues', 200, 0.07],
    ['GET', '/api/queues', 503, 7.5], // above every bound: only +Inf
    ['GET', 'unmatched', 404, 0.00002],
  ];

  it('exposes exactly what prom-client exposes for the same requests', async () => {
    const { ours, theirs } = both(requests);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toMatch(/wp_http_request_duration_seconds_bucket\{le="0.001",method="POST",route="\/api\/pools\/:type\/:groupId\/pop"\} 2/);
  });

  it('gives the same JSON as prom-client (but for its exemplar placeholders)', async () => {
    const { ours, theirs } = both(requests);
    const withoutExemplars = (json: unknown) => JSON.parse(JSON.stringify(json, (k, v: unknown) => (k === 'exemplar' ? undefined : v)));
    expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
  });

  it('exposes nothing but the headers before the first request', async () => {
    const { ours, theirs } = both([]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
