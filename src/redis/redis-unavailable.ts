/**
 * Whether an error means Redis could not be reached or could not answer (as opposed to a bug,
 * bad data, or Redis refusing a command it did run), so that only outages are reported as
 * `redis_unavailable`, only outages take a fail-open or fallback path, and a job that meets one is
 * delayed without spending an attempt (src/lib/dependency-down.ts). A write its replicas did not
 * acknowledge in time (ReplicaAckError, src/redis/replica-ack.ts) counts as one: Redis could not
 * make it safe. So does READONLY: the server was demoted by a failover.
 */
import { DeadlineError } from '../lib/deadline.js';

/**
 * A Redis command with no reply within its own deadline (the pools' commands, src/pools/pool-lists.ts,
 * which have no ioredis command timeout): Redis down, frozen or too slow, as ioredis's `Command
 * timed out` says for the other connections. Still a DeadlineError: the command may run later.
 */
export class RedisNoReplyError extends DeadlineError {
  constructor(ms: number) {
    super(ms);
    this.name = 'RedisNoReplyError';
    this.message = `Redis: no reply within ${ms} ms`;
  }
}

const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError', 'AbortError', 'ReplicaAckError', 'RedisNoReplyError']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE =
  /Connection is closed|Stream isn't writeable|enableOfflineQueue|Cluster isn't ready|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|Command timed out|connect ETIMEDOUT|None of startup nodes is available|Failed to refresh slots cache|Too many Cluster redirections|^CLUSTERDOWN|^LOADING|^MASTERDOWN|^TRYAGAIN|^READONLY|All sentinels are unreachable/;

export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return UNAVAILABLE_NAMES.has(err.name) || UNAVAILABLE_MESSAGE.test(err.message);
}
