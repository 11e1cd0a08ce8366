import { describe, expect, it } from 'vitest';
import { isOlderVersion, MIN_REDIS_VERSION, RedisTooOldError, redisVersionOf } from './redis-version.js';

describe('the Redis version check', () => {
  it('reads redis_version from an INFO reply', () => {
    expect(redisVersionOf('# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n')).toBe('7.0.15');
    expect(redisVersionOf('# Server\r\nredis_git_sha1:0\r\n')).toBeUndefined();
  });

  it('compares versions part by part, numerically', () => {
    expect(isOlderVersion('6.0.16', MIN_REDIS_VERSION)).toBe(true);
    expect(isOlderVersion('5.0.7', MIN_REDIS_VERSION)).toBe(true);
    expect(isOlderVersion('6.2.0', MIN_REDIS_VERSION)).toBe(false);
    expect(isOlderVersion('6.10.0', MIN_REDIS_VERSION)).toBe(false);
    expect(isOlderVersion('7.0.15', MIN_REDIS_VERSION)).toBe(false);
    expect(isOlderVersion('255.255.255', MIN_REDIS_VERSION)).toBe(false);
    expect(isOlderVersion('6.2', '6.2.1')).toBe(true);
  });

  it('names the old version, where it runs and what to do', () => {
    const err = new RedisTooOldError('6.0.16', 'redis://old-redis:6379');
    expect(err.message).toContain('Redis 6.0.16 at redis://old-redis:6379 is too old: the platform needs Redis 6.2.0 or later');
    expect(err.message).toContain('upgrade it');
  });
});
