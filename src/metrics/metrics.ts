import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpMetrics } from './http-metrics.js';

/**
 * The process's Prometheus metrics. One registry per process (not prom-client's global one),
 * so tests and several roles in one process never clash. Domains add their own metrics to
 * `registry` through the helpers below.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly jobsCompleted = new Counter({
    name: 'wp_jobs_completed_total',
    help: 'Jobs completed, by queue.',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  readonly jobsFailed = new Counter({
    name: 'wp_jobs_failed_total',
    help: 'Job attempts that failed, by queue and outcome (retry: attempts left; dead: in the failed set).',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobsDelayed = new Counter({
    name: 'wp_jobs_delayed_total',
    help: "Job attempts that ended waiting, not failing, by queue and reason (turn: a rate limit's routine wait, e.g. a domain's turn; blocked: the remote side asked to wait; outage: Redis or the database was unavailable; delayed: the job moved itself later).",
    labelNames: ['queue', 'reason'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'wp_job_duration_seconds',
    help: 'Processing time of a job attempt, by queue.',
    labelNames: ['queue'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 180],
    registers: [this.registry],
  });

  readonly queueJobs = new Gauge({
    name: 'wp_queue_jobs',
    help: 'Jobs in each queue by state (read at scrape time).',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });

  readonly dependencyUp = new Gauge({
    name: 'wp_dependency_up',
    help: '1 when the dependency answered its last probe, else 0.',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });

  /** wp_http_requests_total and wp_http_request_duration_seconds (see http-metrics.ts). */
  readonly http = new HttpMetrics(this.registry, [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5]);

  private readonly collectors: (() => Promise<void>)[] = [];

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'wp_process_' });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return (this.registry.getSingleMetric(name) as Counter<L>) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return (this.registry.getSingleMetric(name) as Gauge<L>) ?? new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[] = [], buckets?: number[]): Histogram<L> {
    return (
      (this.registry.getSingleMetric(name) as Histogram<L>) ??
      new Histogram({ name, help, labelNames, registers: [this.registry], ...(buckets ? { buckets } : {}) })
    );
  }

  /** Runs `collect` before each scrape (queue counts, dependency probes). Errors are swallowed. */
  onScrape(collect: () => Promise<void>): void {
    this.collectors.push(collect);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    await Promise.all(this.collectors.map((c) => c().catch(() => undefined)));
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
