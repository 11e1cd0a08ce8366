import { describe, expect, it } from 'vitest';
import { BlockedError, DependencyDownError, PermanentError, RetryableError } from '../errors.js';
import { RedisNoReplyError } from '../redis/redis-unavailable.js';
import { dependencyDown } from './dependency-down.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('dependencyDown', () => {
  it('names Redis for its outages, including timeouts and cluster redirections past their retries', () => {
    expect(dependencyDown(new Error('Command timed out'))).toBe('redis');
    expect(dependencyDown(new Error('Connection is closed.'))).toBe('redis');
    expect(dependencyDown(Object.assign(new Error('Reached the max retries per request limit (which is 1).'), { name: 'MaxRetriesPerRequestError' }))).toBe(
      'redis',
    );
    expect(dependencyDown(new Error('Too many Cluster redirections. Last error: Error: TRYAGAIN'))).toBe('redis');
    expect(dependencyDown(new Error('CLUSTERDOWN The cluster is down'))).toBe('redis');
    expect(dependencyDown(new RedisNoReplyError(2000))).toBe('redis');
  });

  it('names the database for its outages, and for a bare socket error (what a pg pool connect gives)', () => {
    expect(dependencyDown(new Error('timeout exceeded when trying to connect'))).toBe('database');
    expect(dependencyDown(new Error('Connection terminated due to connection timeout'))).toBe('database');
    expect(dependencyDown(withCode('terminating connection due to administrator command', '57P01'))).toBe('database');
    expect(dependencyDown(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe('database');
  });

  it('looks into causes', () => {
    expect(dependencyDown(new Error('Lua script "x": Command timed out', { cause: new Error('Command timed out') }))).toBe('redis');
    expect(dependencyDown(new Error('outer', { cause: new Error('inner', { cause: withCode('gone', '08006') }) }))).toBe('database');
  });

  it('takes a classed error at its word', () => {
    expect(dependencyDown(new DependencyDownError('redis', 'logout needs Redis'))).toBe('redis');
    expect(dependencyDown(new DependencyDownError('database', 'no DB'))).toBe('database');
    // A feed's or a crawl's failure mentioning a socket error is theirs, not an outage of ours.
    expect(dependencyDown(new RetryableError('network: connect ECONNREFUSED 203.0.113.9:80'))).toBeUndefined();
    expect(dependencyDown(new PermanentError('x', 'permanent', { cause: new Error('Command timed out') }))).toBeUndefined();
    expect(dependencyDown(new BlockedError('Command timed out', 100))).toBeUndefined();
    expect(dependencyDown(new Error('wrapped', { cause: new RetryableError('Connection is closed.') }))).toBeUndefined();
  });

  it('does not take a bug, a refused statement or a non-error for an outage', () => {
    expect(dependencyDown(new TypeError('x is not a function'))).toBeUndefined();
    expect(dependencyDown(withCode('duplicate key value violates unique constraint', '23505'))).toBeUndefined();
    expect(dependencyDown(Object.assign(new Error('WRONGTYPE Operation against a key'), { name: 'ReplyError' }))).toBeUndefined();
    expect(dependencyDown('Command timed out')).toBeUndefined();
    expect(dependencyDown(undefined)).toBeUndefined();
  });
});
