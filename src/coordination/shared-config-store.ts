/**
 * The shared config in Redis: `…:config:{cluster}` (JSON, TTL CONFIG_TTL_SECONDS) and its version
 * counter `…:config:{cluster}:version` (INCR, no TTL). Both share the slot of the `cluster`
 * lease, so publishing checks the lease in the same script: an instance that is no longer the
 * leader cannot publish, even if it was paused right after its own check.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import { LEADER_TASK } from './leadership.js';
import { decodePublished, type PublishedConfig } from './shared-config.js';

/** Renews the published config when it has the leader's digest, else publishes a new version (shared-config-publish.lua). */
const publish = RedisScript.load('shared-config-publish', new URL('./shared-config-publish.lua', import.meta.url), {
  keys: ['lease', 'config', 'version'],
  args: ['leaseValue', 'digest', 'body', 'ttlMs'],
});

/** What a publication did: the lease was not the leader's, the published config was the same (kept alive), or a new version. */
export type PublishResult = { kind: 'not-leader' } | { kind: 'unchanged' } | { kind: 'published'; version: number };

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

  /** One round trip: keeps the config alive when `digest` is the published one's, else publishes `body` as a new version. */
  async publish(leaseValue: string, digest: string, body: string, ttlMs: number): Promise<PublishResult> {
    const v = await publish.run<number>(
      this.redis,
      { lease: this.keys.lease(LEADER_TASK), config: this.keys.sharedConfig(), version: this.keys.sharedConfigVersion() },
      { leaseValue, digest, body, ttlMs },
    );
    return v < 0 ? { kind: 'not-leader' } : v === 0 ? { kind: 'unchanged' } : { kind: 'published', version: v };
  }
}
