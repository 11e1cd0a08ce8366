/**
 * What every role gets: configuration, logging, metrics, Redis, the queues and the database.
 * Built once per process by src/runtime/start-platform.ts and passed down explicitly.
 */
import type { Config } from './config/index.js';
import type { Database } from './db/client.js';
import type { Logger } from './logging/logger.js';
import type { Metrics } from './metrics/metrics.js';
import type { RedisClient } from './redis/connection.js';
import type { RedisConnections } from './redis/connections.js';
import type { Keys } from './redis/keys.js';
import type { QueueRegistry } from './queues/registry.js';

/** One term of leadership of a singleton work: from acquiring its lease to losing or releasing it. */
export interface LeaderTerm {
  readonly work: string;
  /** Fencing token: grows with every new term of this work, across instances. */
  readonly token: number;
  /** Aborted the moment the term ends (renewal lost, local deadline passed, release, shutdown). */
  readonly signal: AbortSignal;
  /**
   * Cheap local check (no Redis): false once the lease may have expired. Call it right before
   * every singleton action; a process resumed after a pause sees false before anything else.
   */
  isCurrent(): boolean;
}

export interface Leadership {
  /**
   * True while this instance holds the lease of `work` and its local deadline has not passed.
   * Without a name: the `cluster` lease, i.e. whether this instance is "the leader".
   */
  isLeader(work?: string): boolean;
  /**
   * Registers singleton work: this process competes for the lease of `name`; while it holds it,
   * `start` has run, and the returned stop function is awaited as soon as the lease is lost or
   * released. Several registrations of one name share one lease.
   */
  whileLeader(name: string, start: (term: LeaderTerm) => Promise<() => Promise<void>>): void;
  /** The terms this instance holds now. */
  held(): { work: string; token: number; since: Date }[];
}

/** The platform's runtime config computed from the DB, published by the leader (src/cluster). */
export interface SharedConfigContent {
  /** Group ids with rows available or reserved, per pool type (the pools check reads them). */
  poolGroups: { titles: number[]; contents: number[] };
}

export interface SharedConfigSnapshot {
  /** Published version; null when computed locally. */
  version: number | null;
  /** `shared`: read from Redis; `local`: computed from the DB by this process (Redis down or nothing published yet). */
  source: 'shared' | 'local';
  generatedAt: string;
  generatedBy: string;
  /** When this process loaded it. */
  loadedAt: string;
  digest: string;
  content: SharedConfigContent;
}

export interface SharedConfigView {
  /** The config this process runs on (undefined only until the first load). */
  current(): SharedConfigSnapshot | undefined;
  /** Called with every newly loaded snapshot. */
  onChange(listener: (snapshot: SharedConfigSnapshot) => void): void;
  /** Checks the version now instead of at the next sync tick. */
  refresh(): Promise<void>;
}

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
  leadership: Leadership;
  sharedConfig: SharedConfigView;
}

/** A started role: what it serves and how it stops. */
export interface RoleHandle {
  name: string;
  /** Queues this role consumes (shown in the cluster registry). */
  queues: string[];
  /** Stops the role: intake first, then active work, then its resources. Idempotent. */
  stop(): Promise<void>;
}
