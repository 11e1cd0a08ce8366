/**
 * The OpenTelemetry SDK of a process with tracing on; what is traced, by what, and the settings are
 * docs/operations.md#tracing.
 *
 * Invariants: loaded by start-tracing.ts only when tracing is on, and before the modules it
 * instruments (pg and ioredis are patched when first imported: import-in-the-middle for ES modules,
 * require-in-the-middle for CommonJS, hooking only the modules an instrumentation asked for), so
 * nothing of the platform that reaches them may load before startSdk returns (run.ts loads
 * start-platform.ts after it). Queries and commands are recorded only inside a request's or a job's
 * span (requireParentSpan). Never recorded: query parameters (enhancedDatabaseReporting off), Redis
 * arguments (only the command's name), the database's credentials, job data, results and progress,
 * request URLs, headers and bodies. The exporter's failures are logged at most once a minute and
 * never hold up the platform (a full buffer drops spans).
 */
import { register } from 'node:module';
import { diag, DiagLogLevel, trace, type DiagLogger } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { tracesUrl } from '../config/tracing.js';
import type { Config } from '../config/index.js';
import { settlesWithin } from '../lib/timeout.js';
import type { Logger } from '../logging/logger.js';
import { bullmqTelemetry } from './bullmq-telemetry.js';
import { requestSpans } from './http-spans.js';
import { platformSampler } from './sampler.js';
import type { Tracing } from './start-tracing.js';

/** How long one export may take before it is given up (the exporter retries within it). */
const EXPORT_TIMEOUT_MS = 10_000;
/** The exporter's complaints are logged at most this often. */
const DIAG_LOG_EVERY_MS = 60_000;

export interface SdkOptions {
  config: Pick<Config, 'tracing'>;
  instanceId: string;
  roles: readonly string[];
  logger: Logger;
}

export async function startSdk(options: SdkOptions): Promise<Tracing> {
  const t = options.config.tracing;
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  diag.setLogger(throttledDiag(options.logger), DiagLogLevel.WARN);

  const url = tracesUrl(t);
  const exporter: SpanExporter =
    t.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS })
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS });
  const resource = resourceFromAttributes({
    'service.name': t.serviceName,
    'service.instance.id': options.instanceId,
    'worker_platform.roles': options.roles.join(','),
  }).merge(detectResources({ detectors: [envDetector] })); // OTEL_RESOURCE_ATTRIBUTES may add or override
  const provider = new NodeTracerProvider({
    resource,
    sampler: platformSampler(t.sampleRatio),
    spanProcessors: [new BatchSpanProcessor(exporter, { exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
  });
  // AsyncLocalStorage context; W3C trace context only, no baggage: what a client sends is copied
  // into every job it causes (BullMQ keeps the context in the job), so only the bounded
  // traceparent/tracestate pair is taken, never an arbitrary baggage header.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  await waitForAllMessagesAcknowledged(); // the loader knows which modules to wrap before any is imported

  options.logger.info({ url: withoutCredentials(url), protocol: t.protocol, sampleRatio: t.sampleRatio }, 'tracing on: exporting spans over OTLP');
  let stopping: Promise<boolean> | undefined;
  return {
    telemetry: bullmqTelemetry(),
    observeRequest: requestSpans(trace.getTracer('worker-platform/http')),
    shutdown: (timeoutMs) => (stopping ??= settlesWithin(provider.shutdown(), timeoutMs)),
  };
}

/** The URL as it may be logged: a user and password in it are masked. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) [u.username, u.password] = ['***', ''];
    return u.toString();
  } catch {
    return '<invalid URL>';
  }
}

/** OpenTelemetry's own warnings and errors (an export that failed) as warn lines, at most one a minute. */
function throttledDiag(logger: Logger): DiagLogger {
  let last = 0;
  let suppressed = 0;
  const log = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - last < DIAG_LOG_EVERY_MS) {
      suppressed++;
      return;
    }
    last = now;
    const detail = [message, ...args].map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
    logger.warn({ detail: detail.slice(0, 500), suppressed }, 'tracing: OpenTelemetry reported a problem (an export that failed: is the collector up?)');
    suppressed = 0;
  };
  const ignore = () => undefined;
  return { error: log, warn: log, info: ignore, debug: ignore, verbose: ignore };
}
