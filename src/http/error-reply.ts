/**
 * The one error mapping, with no I/O: whatever a request failed with becomes its status and the
 * API's error body {"error": {"code", "message", "field"?, "details"?}}. Domains throw outcomes
 * (src/errors.ts); this is the only place that knows their status codes.
 *
 * A dependency outage (the database or Redis unreachable, as src/lib/dependency-down.ts decides
 * for every part of the platform) is a 503 naming it, `redis_unavailable` or
 * `database_unavailable`; a busy database pool a 503 `database_busy`; every 503 carries
 * Retry-After. Anything else unforeseen is a 500 that carries the request id, so the error logged
 * once at error level (the `log` of the answer) is found from what the client saw.
 */
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  OutcomeError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
} from '../errors.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { dependencyDown, type Dependency } from '../lib/dependency-down.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { HttpError } from './http-error.js';

export type { Dependency } from '../lib/dependency-down.js';

export interface ErrorBody {
  error: { code: string; message: string; field?: string; details?: unknown; requestId?: string };
}

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
  /** What the server log should say about it (nothing for a caller's mistake). */
  log?: { level: 'warn' | 'error'; message: string };
}

export function errorBody(code: string, message: string, field?: string, details?: unknown): ErrorBody {
  return { error: { code, message, ...(field ? { field } : {}), ...(details !== undefined ? { details } : {}) } };
}

const OUTCOME_STATUS: [new (...args: never[]) => OutcomeError, number][] = [
  [InvalidInputError, 400],
  [UnauthenticatedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [InvalidStateError, 409],
  [RateLimitedError, 429],
  [UnavailableError, 503],
];

/** Retry-After of a 503: about when the dependency monitor (or a restarted service) may have news. */
export const RETRY_AFTER_SECONDS = 5;
const RETRY_AFTER = { 'retry-after': String(RETRY_AFTER_SECONDS) };

/**
 * Which dependency a raw outage error is of (dependency-down.ts). A bare socket error fits both
 * recognisers (ECONNREFUSED with no pg or ioredis message): then the one the dependency monitor
 * finds down, if it finds one.
 */
function outageOf(err: unknown, down: Dependency | undefined): Dependency | undefined {
  const dependency = dependencyDown(err);
  if (dependency && down && isDatabaseUnavailable(err) && isRedisUnavailable(err)) return down;
  return dependency;
}

function outcomeStatus(err: OutcomeError): number | undefined {
  for (const [type, status] of OUTCOME_STATUS) if (err instanceof type) return status;
  return undefined;
}

/** Prisma's known request errors carry a code like P2002 (unique) or P2025 (not found). */
function prismaCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^P\d{4}$/.test(code) ? code : undefined;
}

/**
 * An error of express's body parsers (Bull Board's login form, the one express route that reads a
 * body): an http-error with a 4xx status it exposes and a type.
 */
function parserReply(err: unknown): ErrorReply | undefined {
  const e = err as { status?: unknown; expose?: unknown; type?: unknown; message?: unknown; limit?: unknown } | null;
  if (typeof e?.status !== 'number' || e.status < 400 || e.status >= 500 || e.expose !== true) return undefined;
  const message = String(e.message);
  if (e.type === 'entity.too.large')
    return { status: 413, body: errorBody('body_too_large', `the request body exceeds the limit of ${e.limit} bytes`, '(body)') };
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return { status: 415, body: errorBody('unsupported_encoding', message, '(body)') };
  return { status: e.status, body: errorBody('bad_request', message) };
}

/**
 * `down`: the dependency the monitor finds down now, if any (names an outage whose error fits
 * both dependencies).
 */
export function errorReply(err: unknown, requestId: string, down?: Dependency): ErrorReply {
  if (err instanceof HttpError) {
    const headers = err.status === 503 ? { ...RETRY_AFTER, ...err.headers } : err.headers;
    return { status: err.status, body: errorBody(err.code, err.message, err.field), ...(headers ? { headers } : {}) };
  }
  if (err instanceof OutcomeError) {
    const status = outcomeStatus(err);
    if (status !== undefined) {
      const reply: ErrorReply = { status, body: errorBody(err.code, err.message, err.field, err.details) };
      if (err instanceof RateLimitedError) reply.headers = { 'retry-after': String(err.retryAfterSeconds) };
      if (status === 503) reply.headers = RETRY_AFTER;
      return reply;
    }
  }
  const parser = parserReply(err);
  if (parser) return parser;
  const pc = prismaCode(err);
  if (pc === 'P2025') return { status: 404, body: errorBody('not_found', 'no such record') };
  if (pc === 'P2002') return { status: 409, body: errorBody('conflict', 'a record with these values already exists') };
  if (pc === 'P2028' || pc === 'P2024') {
    // A transaction could not get a connection, or ran out of time, while the database was busy.
    return {
      status: 503,
      body: errorBody('database_busy', 'the database is busy; try again shortly'),
      headers: RETRY_AFTER,
      log: { level: 'warn', message: 'database busy' },
    };
  }
  const outage = outageOf(err, down);
  if (outage) {
    const message = `${outage === 'redis' ? 'Redis' : 'the database'} is unavailable; try again shortly`;
    return { status: 503, body: errorBody(`${outage}_unavailable`, message), headers: RETRY_AFTER, log: { level: 'warn', message: 'dependency unavailable' } };
  }
  // A bug or an unforeseen failure: never reported as a dependency being down.
  return {
    status: 500,
    body: { error: { code: 'internal_error', message: `internal error; request id ${requestId}`, requestId } },
    log: { level: 'error', message: 'unhandled error' },
  };
}
