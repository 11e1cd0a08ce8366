/**
 * The shared config in Redis: `…:config:{cluster}` (JSON, TTL CONFIG_TTL_SECONDS) and its version
 * counter `…:config:{cluster}:version` (INCR, no TTL). Both share the slot of the `cluster`
 * lease, so publishing and the keep-alive check the lease in the same script: an instance that
 * is no longer the leader cannot publish, even if it was paused right after its own check.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import { LEADER_TASK } from './leadership.js';
import { decodePublished, type PublishedConfig } from './shared-config.js';

/** Renews the published config's TTL when it has the leader's digest (shared-config-keep-alive.lua). */
const keepAlive = RedisScript.load('shared-config-keep-alive', new URL('./shared-config-keep-alive.lua', import.meta.url), {
  keys: ['lease', 'config'],
  args: ['leaseValue', 'digest', 'ttlMs'],
});

/** Publishes a new version: counter and config together (shared-config-publish.lua). */
const publish = RedisScript.load('shared-config-publish', new URL('./shared-config-publish.lua', import.meta.url), {
  keys: ['lease', 'config', 'version'],
  args: ['leaseValue', 'body', 'ttlMs'],
});

export class SharedConfigStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<Keys, 'lease' | 'sharedConfig' | 'sharedConfigVersion'>,
  ) {}

  /** The published version; null when nothing was ever published (or Redis lost it). */
  async readVersion(): Promise<number | null> {
    const v = await this.redis.get(this.keys.sharedConfigVersion());
    return v === null ? null : Number(v);
  }

  /** The published config; null when none (or it expired, or it is unreadable). */
  async read(): Promise<PublishedConfig | null> {
    const text = await this.redis.get(this.keys.sharedConfig());
    if (text === null) return null;
    try {
      return decodePublished(text);
    } catch {
      return null;
    }
  }

  keepAlive(leaseValue: string, digest: string, ttlMs: number): Promise<-1 | 0 | 1> {
    return keepAlive.run<-1 | 0 | 1>(this.redis, { lease: this.keys.lease(LEADER_TASK), config: this.keys.sharedConfig() }, { leaseValue, digest, ttlMs });
  }

  /** The new version, or null when `leaseValue` no longer holds the leader's lease. */
  async publish(leaseValue: string, body: string, ttlMs: number): Promise<number | null> {
    const v = await publish.run<number>(
      this.redis,
      { lease: this.keys.lease(LEADER_TASK), config: this.keys.sharedConfig(), version: this.keys.sharedConfigVersion() },
      { leaseValue, body, ttlMs },
    );
    return v < 0 ? null : v;
  }
}
