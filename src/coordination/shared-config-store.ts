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

/**
 * Keeps the published config alive when it has the leader's digest.
 *
 * KEYS[1] cluster lease, KEYS[2] config
 * ARGV[1] the leader's lease value, ARGV[2] digest, ARGV[3] TTL ms
 * Returns -1 when ARGV[1] does not hold the lease, 1 when the digest matched (TTL renewed),
 * 0 when nothing is published or it differs (publish then).
 */
const keepAlive = new RedisScript(
  'shared-config-keep-alive',
  `-- KEYS[1] cluster lease, KEYS[2] config; ARGV[1] lease value, ARGV[2] digest, ARGV[3] ttl ms
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local current = redis.call('GET', KEYS[2])
if current and string.match(current, '"digest":"(%x+)"') == ARGV[2] then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
return 0
`,
);

/**
 * Publishes a new version: INCR of the counter and the config carrying that version, together.
 *
 * KEYS[1] cluster lease, KEYS[2] config, KEYS[3] version counter
 * ARGV[1] the leader's lease value, ARGV[2] body (a JSON object without "version"), ARGV[3] TTL ms
 * Returns the new version, or -1 when ARGV[1] does not hold the lease.
 */
const publish = new RedisScript(
  'shared-config-publish',
  `-- KEYS[1] cluster lease, KEYS[2] config, KEYS[3] version; ARGV[1] lease value, ARGV[2] body, ARGV[3] ttl ms
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local version = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[2], '{"version":' .. version .. ',' .. string.sub(ARGV[2], 2), 'PX', ARGV[3])
return version
`,
);

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
    return keepAlive.run<-1 | 0 | 1>(this.redis, [this.keys.lease(LEADER_TASK), this.keys.sharedConfig()], [leaseValue, digest, ttlMs]);
  }

  /** The new version, or null when `leaseValue` no longer holds the leader's lease. */
  async publish(leaseValue: string, body: string, ttlMs: number): Promise<number | null> {
    const v = await publish.run<number>(this.redis, [this.keys.lease(LEADER_TASK), this.keys.sharedConfig(), this.keys.sharedConfigVersion()], [leaseValue, body, ttlMs]);
    return v < 0 ? null : v;
  }
}
