import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  DependencyDownError,
  ForbiddenError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  PermanentError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
} from '../errors.js';
import { PayloadError } from '../queues/registry.js';
import { errorReply, RETRY_AFTER_SECONDS } from './error-reply.js';
import { HttpError } from './http-error.js';

describe('errorReply', () => {
  it.each([
    [new InvalidInputError('wrong_password', 'no', { field: 'currentPassword' }), 400, { code: 'wrong_password', message: 'no', field: 'currentPassword' }],
    [new UnauthenticatedError('token_expired', 'the token has expired'), 401, { code: 'token_expired', message: 'the token has expired' }],
    [new ForbiddenError('forbidden', 'for admins'), 403, { code: 'forbidden', message: 'for admins' }],
    [new NotFoundError('feed_not_found', 'no feed 7', { field: 'id' }), 404, { code: 'feed_not_found', message: 'no feed 7', field: 'id' }],
    [new ConflictError('feed_exists', 'already', { field: 'url' }), 409, { code: 'feed_exists', message: 'already', field: 'url' }],
    [new InvalidStateError('ip_inactive', 'inactive', { field: 'id' }), 409, { code: 'ip_inactive', message: 'inactive', field: 'id' }],
    [new PayloadError('crawl', 'ipId', 'expected number'), 400, { code: 'invalid_payload', message: 'crawl: ipId: expected number', field: 'ipId' }],
    [new HttpError(413, 'body_too_large', 'too large', '(body)'), 413, { code: 'body_too_large', message: 'too large', field: '(body)' }],
  ])('%s → %i', (err, status, error) => {
    const reply = errorReply(err, 'req-1');
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ error });
    expect(reply.log).toBeUndefined();
  });

  it.each([
    [new UnavailableError('config_not_loaded', 'not yet'), { code: 'config_not_loaded', message: 'not yet' }],
    [new DependencyDownError('redis', 'Redis is down'), { code: 'redis_unavailable', message: 'Redis is down' }],
    [new DependencyDownError('database', 'the database is down'), { code: 'database_unavailable', message: 'the database is down' }],
    [new HttpError(503, 'request_timeout', 'late'), { code: 'request_timeout', message: 'late' }],
  ])('%s → 503 with Retry-After', (err, error) => {
    expect(errorReply(err, 'req-1')).toEqual({ status: 503, body: { error }, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
  });

  it('gives a rate limit its wait, in the body and as Retry-After', () => {
    const reply = errorReply(new RateLimitedError('too_many_attempts', 'wait', 42), 'req-1');
    expect(reply).toEqual({
      status: 429,
      body: { error: { code: 'too_many_attempts', message: 'wait', details: { retryAfterSeconds: 42 } } },
      headers: { 'retry-after': '42' },
    });
  });

  it("passes an HTTP answer's headers on (Allow of a 405)", () => {
    expect(errorReply(new HttpError(405, 'method_not_allowed', 'no', undefined, { allow: 'GET, HEAD' }), 'r').headers).toEqual({ allow: 'GET, HEAD' });
  });

  it("maps Prisma's not-found, unique and busy codes", () => {
    expect(errorReply({ code: 'P2025', message: 'x' }, 'r')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(errorReply({ code: 'P2002', message: 'x' }, 'r')).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(errorReply({ code: 'P2024', message: 'x' }, 'r')).toMatchObject({
      status: 503,
      body: { error: { code: 'database_busy' } },
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      log: { level: 'warn' },
    });
  });

  it('answers a real outage of the database or Redis with 503 naming it and Retry-After, logged as a warning', () => {
    const retryAfter = { 'retry-after': String(RETRY_AFTER_SECONDS) };
    const db = [
      Object.assign(new Error("Can't reach database server"), { code: 'P1001' }),
      new Error('Query read timeout'),
      new Error('timeout exceeded when trying to connect'),
    ];
    const redis = [
      new Error('Connection is closed.'),
      new Error('Command timed out'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ];
    for (const err of db) {
      expect(errorReply(err, 'r')).toMatchObject({
        status: 503,
        body: { error: { code: 'database_unavailable' } },
        headers: retryAfter,
        log: { level: 'warn' },
      });
    }
    for (const err of redis) {
      expect(errorReply(err, 'r')).toMatchObject({ status: 503, body: { error: { code: 'redis_unavailable' } }, headers: retryAfter, log: { level: 'warn' } });
    }
    // A socket error either could give: the dependency the monitor finds down, else the database
    // (src/lib/dependency-down.ts: a bare socket error comes from pg more often).
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(errorReply(refused, 'r', 'redis').body.error.code).toBe('redis_unavailable');
    expect(errorReply(refused, 'r', 'database').body.error.code).toBe('database_unavailable');
    expect(errorReply(refused, 'r')).toMatchObject({ status: 503, body: { error: { code: 'database_unavailable' } }, headers: retryAfter });
  });

  it('answers anything else with 500 carrying the request id, logged at error level, never as an outage', () => {
    for (const err of [
      new TypeError('x is undefined'),
      new PermanentError('a job outcome'),
      'a string',
      undefined,
      { code: '42P01', message: 'relation "users" does not exist' },
    ]) {
      expect(errorReply(err, 'find-me-1')).toEqual({
        status: 500,
        body: { error: { code: 'internal_error', message: 'internal error; request id find-me-1', requestId: 'find-me-1' } },
        log: { level: 'error', message: 'unhandled error' },
      });
    }
  });

  it("maps the errors of express's body parsers (Bull Board's login form)", () => {
    const tooLarge = Object.assign(new Error('request entity too large'), { status: 413, expose: true, type: 'entity.too.large', limit: 4096 });
    expect(errorReply(tooLarge, 'r')).toMatchObject({ status: 413, body: { error: { code: 'body_too_large', field: '(body)' } } });
    const other = Object.assign(new Error('bad'), { status: 400, expose: true, type: 'request.aborted' });
    expect(errorReply(other, 'r')).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: 'bad' } } });
  });
});
