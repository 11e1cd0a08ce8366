/**
 * Every process's view of the shared config (ctx.sharedConfig), kept in step with Redis.
 *
 * Every CONFIG_SYNC_INTERVAL_MS: read the version; reload the config only when the version
 * differs from the one this process runs on. When Redis cannot be reached, compute the config
 * locally from the DB (warning logged once per outage) and keep recomputing it each period, so
 * DB changes still arrive; when Redis answers again, load the published version (the leader
 * republishes within CONFIG_REFRESH_INTERVAL_MS if the DB changed meanwhile). Before anything
 * was published (a fresh cluster, a Redis that lost its data) the process also runs on a local
 * computation.
 *
 * Sources of the current snapshot: `shared` (version N from Redis) or `local` (version null).
 */
import { OutageLog } from '../lib/outage-log.js';
import { startPeriodic } from '../lib/periodic.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { digestOf, type SharedConfigContent, type SharedConfigSnapshot, type SharedConfigView } from './shared-config.js';
import type { SharedConfigStore } from './shared-config-store.js';
import { toError } from '../errors.js';

export interface SharedConfigFollowerDeps {
  store: SharedConfigStore;
  compute: () => Promise<SharedConfigContent>;
  instanceId: string;
  intervalMs: number;
  logger: Logger;
  metrics: Metrics;
}

export class SharedConfigFollower implements SharedConfigView {
  private snapshot: SharedConfigSnapshot | undefined;
  private readonly listeners: ((s: SharedConfigSnapshot) => void)[] = [];
  private chain: Promise<void> = Promise.resolve();
  private stopChecks: (() => Promise<void>) | undefined;
  private stopped = false;
  private readonly redisOutage: OutageLog;
  private readonly logger: Logger;
  private readonly versionGauge;
  private readonly localGauge;
  private readonly reloads;

  constructor(private readonly deps: SharedConfigFollowerDeps) {
    this.logger = deps.logger.child({ component: 'shared-config' });
    this.redisOutage = new OutageLog({
      began: (err) =>
        this.logger.warn({ err: toError(err).message }, 'shared config: Redis unreachable; running on a config computed locally from the database'),
      ended: () => this.logger.info('Redis reachable again: following the published shared config'),
    });
    this.versionGauge = deps.metrics.gauge(
      'wp_cluster_config_version',
      'Version of the shared config this process runs on (0 while it runs on a local computation).',
    );
    this.localGauge = deps.metrics.gauge(
      'wp_cluster_config_local',
      '1 while this process runs on a shared config computed locally (Redis unreachable or nothing published).',
    );
    this.reloads = deps.metrics.counter('wp_cluster_config_reloads_total', 'Shared config snapshots loaded by this process, by source (shared, local).', [
      'source',
    ]);
  }

  /** First load (awaited, so roles start with a config), then the periodic check. */
  async start(): Promise<void> {
    await this.refresh();
    this.stopChecks = startPeriodic(() => this.refresh(), this.deps.intervalMs, { runNow: false });
  }

  current(): SharedConfigSnapshot | undefined {
    return this.snapshot;
  }

  onChange(listener: (snapshot: SharedConfigSnapshot) => void): void {
    this.listeners.push(listener);
  }

  refresh(): Promise<void> {
    const next = this.chain.then(() => (this.stopped ? undefined : this.check()));
    this.chain = next.catch((err: unknown) => this.logger.error({ err }, 'shared config check failed'));
    return this.chain;
  }

  stop(): Promise<void> {
    this.stopped = true;
    void this.stopChecks?.();
    return this.chain;
  }

  private async check(): Promise<void> {
    const { store } = this.deps;
    let version: number | null;
    try {
      version = await store.readVersion();
    } catch (err) {
      return this.fallBack(err);
    }
    this.redisOutage.success();
    const current = this.snapshot;
    if (version !== null && current?.source === 'shared' && current.version === version) return; // unchanged: no reload
    let published;
    try {
      published = version === null ? null : await store.read();
    } catch (err) {
      return this.fallBack(err);
    }
    if (!published) {
      // Nothing published yet (or it expired): run on a local computation until the leader publishes.
      if (current?.source !== 'shared') await this.computeLocally();
      return;
    }
    this.adopt({ ...published, source: 'shared', loadedAt: new Date().toISOString() });
  }

  private async fallBack(err: unknown): Promise<void> {
    this.redisOutage.failure(err);
    await this.computeLocally();
  }

  private async computeLocally(): Promise<void> {
    let content: SharedConfigContent;
    try {
      content = await this.deps.compute();
    } catch (err) {
      this.logger.warn({ err: toError(err).message }, 'shared config: local computation failed; keeping the current one');
      return;
    }
    const digest = digestOf(content);
    const current = this.snapshot;
    if (current?.source === 'local' && current.digest === digest) return;
    const now = new Date().toISOString();
    this.adopt({ version: null, source: 'local', generatedAt: now, generatedBy: this.deps.instanceId, loadedAt: now, digest, content });
  }

  private adopt(snapshot: SharedConfigSnapshot): void {
    const previous = this.snapshot;
    this.snapshot = snapshot;
    this.versionGauge.set(snapshot.version ?? 0);
    this.localGauge.set(snapshot.source === 'local' ? 1 : 0);
    this.reloads.inc({ source: snapshot.source });
    this.logger.info(
      { version: snapshot.version, source: snapshot.source, previousVersion: previous?.version ?? null, generatedBy: snapshot.generatedBy },
      'shared config loaded',
    );
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.logger.error({ err }, 'shared config listener failed');
      }
    }
  }
}
