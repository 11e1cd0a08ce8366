/**
 * The one place that decides whether a failure is an outage of a dependency: Redis or the
 * database could not be reached or could not answer in time (connection lost or refused, a
 * command timed out, cluster redirections past their retries, the server shutting down or
 * starting up), as opposed to a bug, bad data or a statement the dependency refused.
 *
 * The worker factory (an outage delays a job without spending an attempt), the HTTP error mapper
 * (503) and the job processors that treat an outage apart ask here. The recognisers of each
 * dependency's errors stay beside its client (src/redis/redis-unavailable.ts,
 * src/db/database-unavailable.ts), and a request path that called one client and takes a fallback
 * when it is down (the blacklist check, a pool pop) asks that client's recogniser directly. This
 * adds the rules between them:
 *
 * - an error a domain has classed (a PlatformError, src/errors.ts) is taken at its word:
 *   DependencyDownError names its dependency, any other is not an outage, whatever its message
 *   or cause (a feed's "connect ECONNREFUSED" is the feed's failure, not ours);
 * - otherwise the error and its causes, a few levels deep, are examined; the database's
 *   recogniser comes first, because a bare socket error (ECONNREFUSED from a pool connect) more
 *   often comes from pg than from ioredis, which reports its own outages in its own words.
 */
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { DependencyDownError, PlatformError } from '../errors.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';

export type Dependency = 'redis' | 'database';

const MAX_DEPTH = 4;

/** Which dependency `err` says is down, or undefined when it is not an outage. */
export function dependencyDown(err: unknown): Dependency | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_DEPTH && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof DependencyDownError) return current.dependency;
    if (current instanceof PlatformError) return undefined;
    if (isDatabaseUnavailable(current)) return 'database';
    if (isRedisUnavailable(current)) return 'redis';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
