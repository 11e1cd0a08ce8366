/**
 * What every role gets: configuration, logging, metrics, Redis, the queues and the database.
 * Built once per process by src/runtime/start-platform.ts and passed down explicitly.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Telemetry } from 'bullmq';
import type { Config } from './config/index.js';
import type { Leadership } from './coordination/leadership.js';
import type { SharedConfigView } from './coordination/shared-config.js';
import type { Database } from './db/client.js';
import type { Logger } from './logging/logger.js';
import type { Metrics } from './metrics/metrics.js';
import type { RedisClient } from './redis/connection.js';
import type { RedisConnections } from './redis/connections.js';
import type { Keys } from './redis/keys.js';
import type { QueueRegistry } from './queues/registry.js';

export interface PlatformContext {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  instanceId: string;
  keys: Keys;
  connections: RedisConnections;
  /** Shared fail-fast connection for request-path commands. */
  redis: RedisClient;
  queues: QueueRegistry;
  db: Database;
  /** Singleton tasks (src/coordination/lease-manager.ts). */
  leadership: Leadership;
  /** The shared config the leader publishes (src/coordination/shared-config-follower.ts). */
  sharedConfig: SharedConfigView;
  /** With tracing on (src/tracing/): BullMQ's telemetry for every Worker (the registry's Queues have it too). */
  telemetry?: Telemetry;
  /** With tracing on: a span around each API request. */
  observeRequest?: RequestObserver;
}

/** A started role: what it serves and how it stops. */
export interface RoleHandle {
  name: string;
  /** Queues this role consumes (shown in the cluster registry). */
  queues: string[];
  /** Stops the role: intake first, then active work, then its resources. Idempotent. */
  stop(): Promise<void>;
}

/** An API request as an observer sees it (src/http/request-wrapper.ts's Exchange). */
export interface ObservedRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Its request id (X-Request-Id). */
  readonly id: string;
  /** The URL's path, without its query. */
  readonly pathname: string;
  /** The declared route once one matched (`/api/ips/:id/crawl`), else `unmatched`. */
  readonly route: string;
}

/**
 * Sees each API request whole: called as it begins, with `serve` to run its handling, which it
 * must call once (tracing runs it inside the request's span: src/tracing/http-spans.ts).
 */
export type RequestObserver = (request: ObservedRequest, serve: () => void) => void;
