import { describe, expect, it } from 'vitest';
import { DeadlineError } from '../lib/deadline.js';
import { reconnectOnError } from './connection.js';
import { isRedisUnavailable, RedisNoReplyError } from './redis-unavailable.js';
import { ReplicaAckError } from './replica-ack.js';

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

  it('takes a failover for an outage: a demoted master (READONLY), no sentinel answering, a write its replicas did not confirm', () => {
    expect(isRedisUnavailable(Object.assign(new Error("READONLY You can't write against a read only replica."), { name: 'ReplyError' }))).toBe(true);
    expect(isRedisUnavailable(new Error('All sentinels are unreachable. Retrying from scratch after 100ms.'))).toBe(true);
    expect(isRedisUnavailable(new ReplicaAckError('0 of the 1 replica(s) required acknowledged the write within 200 ms (REDIS_REPLICA_ACKS)', 0))).toBe(true);
  });

  it('READONLY makes a connection reconnect and send the refused command again; other replies do not', () => {
    expect(reconnectOnError(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(reconnectOnError(new Error('ERR unknown command'))).toBe(false);
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
