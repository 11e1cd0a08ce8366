/**
 * The oldest Redis the platform runs on: 6.2. The pools move a popped item with `LMOVE` and
 * `pop-many` takes its rows with `RPOP key count`, both new in 6.2; on an older server every pop
 * would fail and be served from the database, with no word why. So every process reads the
 * server's version once at start (`INFO server`, start-platform.ts) and refuses an older one,
 * naming both versions. A server that refuses `INFO` (an ACL, a renamed command) is not checked:
 * the process says so and goes on.
 *
 * It also reads the eviction policy (`maxmemory_policy`, INFO memory) and warns in the log when it
 * is not `noeviction`: under memory pressure such a server deletes keys (jobs, pool lists, the
 * consumed records, leases, the logout blacklist) rather than refusing writes. A warning, not a
 * refusal: some managed services do not let their users change it. The embedded server runs with
 * `noeviction`.
 */
import type { RedisClient } from './connection.js';
import { toError } from '../errors.js';
import type { Logger } from '../logging/logger.js';

export const MIN_REDIS_VERSION = '6.2.0';

/** The `redis_version` field of an INFO reply, or undefined when it has none. */
export function redisVersionOf(info: string): string | undefined {
  return infoField(info, 'redis_version');
}

/** One `name:value` field of an INFO reply. */
function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
}

/** True when `version` (major.minor.patch; missing parts count as 0) is below `minimum`. */
export function isOlderVersion(version: string, minimum: string): boolean {
  const parts = (v: string) => v.split('.').map((p) => Number.parseInt(p, 10) || 0);
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const [x, y] = [a[i] ?? 0, b[i] ?? 0];
    if (x !== y) return x < y;
  }
  return false;
}

/** Thrown at start for a server older than MIN_REDIS_VERSION. */
export class RedisTooOldError extends Error {
  constructor(
    readonly version: string,
    where: string,
  ) {
    super(
      `Redis ${version} at ${where} is too old: the platform needs Redis ${MIN_REDIS_VERSION} or later (the pools use LMOVE and RPOP with a count); ` +
        "upgrade it (the embedded server, without REDIS_URL, is the system's redis-server)",
    );
    this.name = 'RedisTooOldError';
  }
}

/**
 * The start-up check of the Redis a process attaches to: throws RedisTooOldError when its version
 * is older than MIN_REDIS_VERSION; warns when its eviction policy is not `noeviction`.
 */
export async function checkRedisServer(redis: RedisClient, where: string, logger: Logger): Promise<void> {
  let info: string;
  try {
    info = await redis.info('server');
  } catch (err) {
    logger.warn({ err: toError(err).message }, `could not read the Redis version (INFO refused); the platform needs Redis ${MIN_REDIS_VERSION} or later`);
    return;
  }
  const version = redisVersionOf(info);
  if (version === undefined) {
    logger.warn(`the Redis server did not tell its version (no redis_version in INFO); the platform needs Redis ${MIN_REDIS_VERSION} or later`);
    return;
  }
  if (isOlderVersion(version, MIN_REDIS_VERSION)) throw new RedisTooOldError(version, where);
  // A section of its own: Redis before 7.0 takes one section per INFO.
  const policy = infoField(await redis.info('memory').catch(() => ''), 'maxmemory_policy');
  if (policy !== undefined && policy !== 'noeviction') {
    logger.warn(
      { maxmemoryPolicy: policy, redis: where },
      `Redis evicts keys under memory pressure (maxmemory-policy ${policy}): jobs, pool lists, consumed records, leases and the logout blacklist can be lost; set maxmemory-policy noeviction`,
    );
  }
}
