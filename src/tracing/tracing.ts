/** What a process's tracing gives the platform when it is on (started by start-tracing.ts, built by sdk.ts). */
import type { Telemetry } from 'bullmq';
import type { RequestObserver } from '../context.js';

export interface Tracing {
  /** For every Queue, Worker and FlowProducer (BullMQ's `telemetry` option). */
  telemetry: Telemetry;
  /** For the HTTP core: a server span around each request. */
  observeRequest: RequestObserver;
  /** Exports what is still buffered and stops; true when that finished within `timeoutMs`. Idempotent. */
  shutdown(timeoutMs: number): Promise<boolean>;
}
