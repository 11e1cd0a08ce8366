/**
 * Tracing is opt-in (OTEL_ENABLED, or an OTLP endpoint set: src/config/tracing.ts), and off it
 * costs nothing: no OpenTelemetry module is loaded (this file imports only types and the config),
 * no Queue, Worker or FlowProducer gets a telemetry option, and the HTTP core gets no hook.
 *
 * On, the SDK (sdk.ts) must start before the modules it instruments are loaded, so a process
 * entry calls startTracing first and loads the platform after it (src/runtime/run.ts), and hands
 * the result to startPlatform, whose ordered stop flushes the last spans (`shutdown`).
 */
import type { Telemetry } from 'bullmq';
import type { Config } from '../config/index.js';
import { tracingOn } from '../config/tracing.js';
import type { RequestObserver } from '../context.js';
import type { Logger } from '../logging/logger.js';

export interface Tracing {
  /** For every Queue, Worker and FlowProducer (BullMQ's `telemetry` option). */
  telemetry: Telemetry;
  /** For the HTTP core: a server span around each request. */
  observeRequest: RequestObserver;
  /** Exports what is still buffered and stops; true when that finished within `timeoutMs`. Idempotent. */
  shutdown(timeoutMs: number): Promise<boolean>;
}

/** Starts tracing when the settings ask for it; undefined (and nothing loaded) otherwise. */
export async function startTracing(options: { config: Config; roles: readonly string[]; logger: Logger }): Promise<Tracing | undefined> {
  const { config } = options;
  if (!tracingOn(config.tracing)) return undefined;
  const { startSdk } = await import('./sdk.js');
  return startSdk({ config, instanceId: config.derived.instanceId, roles: options.roles, logger: options.logger });
}
