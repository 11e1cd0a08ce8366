import { describe, expect, it } from 'vitest';
import { DeadlineError } from '../lib/deadline.js';
import { isRedisUnavailable, RedisNoReplyError } from './redis-unavailable.js';

describe('isRedisUnavailable', () => {
  it('recognises ioredis outage errors', () => {
    expect(isRedisUnavailable(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isRedisUnavailable(new Error('Command timed out'))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error('x'), { name: 'MaxRetriesPerRequestError' }))).toBe(true);
    expect(isRedisUnavailable(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(isRedisUnavailable(new Error("Cluster isn't ready and enableOfflineQueue options is false"))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error('getaddrinfo EAI_AGAIN redis'), { code: 'EAI_AGAIN' }))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error('connect ENETUNREACH'), { code: 'ENETUNREACH' }))).toBe(true);
  });

  it('recognises a command past its own deadline (the pools connection), still a DeadlineError', () => {
    const err = new RedisNoReplyError(2000);
    expect(isRedisUnavailable(err)).toBe(true);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.message).toBe('Redis: no reply within 2000 ms');
    // A deadline of unknown work says nothing about Redis.
    expect(isRedisUnavailable(new DeadlineError(2000))).toBe(false);
  });

  it('does not take a bug or a refused command for an outage', () => {
    expect(isRedisUnavailable(new TypeError('username.toLowerCase is not a function'))).toBe(false);
    expect(isRedisUnavailable(Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' }))).toBe(
      false,
    );
    expect(isRedisUnavailable('Connection is closed.')).toBe(false);
    expect(isRedisUnavailable(undefined)).toBe(false);
  });
});
