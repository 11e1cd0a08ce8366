/**
 * At least FEED_DOMAIN_MIN_INTERVAL_MS between requests to one domain, across every worker and
 * process. One Redis hash per domain (keys.domainNextSlot), changed only by the two scripts below:
 *
 *   next      the next free reservation slot (ms)
 *   last      when the domain's last request ended (ms, rounded up) or, after a Retry-After,
 *             the time the domain asked us to wait for minus the interval
 *   holder    job id of the request in flight, with holderUntil (a lease: a crashed holder
 *             frees the domain after FEED_FETCH_TIMEOUT_MS + a margin)
 *   r:<job>   the slot a waiting job reserved, so it keeps its place in line
 *
 * acquire: a job first reserves the next free slot (FIFO per domain). It may send its request
 * when its slot has come, nobody is in flight and `last + interval` has passed; it then becomes
 * the holder. Otherwise it gets the wait in ms, and the caller delays the job in BullMQ for
 * that long (no worker slot sleeps).
 * release: the holder records when its request ended; the next request starts at least one
 * interval later. The spacing is therefore measured from the end of one exchange (after the
 * server has answered) to the start of the next, which holds at the server whatever the
 * scheduling jitter of the processes, and all times come from Redis's clock (TIME).
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';

/** Unused domain state is dropped this long after its last reservation. */
const IDLE_TTL_MS = 3_600_000;
/** Shortest delay handed out, so that an interval of 0 does not spin. */
const MIN_WAIT_MS = 5;
/**
 * Reserved slots are the interval plus this margin apart: the exchange itself (from the turn to
 * the end of the response) takes a few ms, and a job that wakes a little before the previous
 * request's end + interval would have to be delayed once more.
 */
const RESERVATION_MARGIN = 0.05;
const RESERVATION_MARGIN_MIN_MS = 20;

const acquireScript = new RedisScript(
  'feed-domain-acquire',
  `-- KEYS[1] domain state hash
-- ARGV[1] job id, ARGV[2] min interval ms, ARGV[3] holder lease ms, ARGV[4] idle ttl ms, ARGV[5] min wait ms,
-- ARGV[6] reservation step ms (the interval plus a margin for the exchange itself)
-- Returns 0 when the job may send its request now (it is the holder), else ms to wait.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, interval, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'next', 'last', 'holder', 'holderUntil', 'r:' .. job)
local nextFree = tonumber(s[1]) or 0
local last = tonumber(s[2])
local holder = s[3]
if holder and (tonumber(s[4]) or 0) <= now then holder = nil end
if holder == job then
  redis.call('HSET', KEYS[1], 'holderUntil', now + lease)
  return 0
end
local slot = tonumber(s[5])
if not slot then
  slot = math.max(nextFree, now)
  nextFree = slot + tonumber(ARGV[6])
  redis.call('HSET', KEYS[1], 'r:' .. job, slot, 'next', nextFree)
end
local earliest = slot
if last and last + interval > earliest then earliest = last + interval end
if not holder and now >= earliest then
  redis.call('HSET', KEYS[1], 'holder', job, 'holderUntil', now + lease, 'next', math.max(nextFree, now + tonumber(ARGV[6])))
  redis.call('HDEL', KEYS[1], 'r:' .. job)
  redis.call('PEXPIRE', KEYS[1], math.max(nextFree - now, 0) + tonumber(ARGV[4]))
  return 0
end
redis.call('PEXPIRE', KEYS[1], math.max(nextFree - now, 0) + tonumber(ARGV[4]))
local wait = earliest - now
-- Someone is in flight: the next start is at least one interval after it ends.
if holder and wait < interval then wait = interval end
if wait < tonumber(ARGV[5]) then wait = tonumber(ARGV[5]) end
return wait`,
);

const releaseScript = new RedisScript(
  'feed-domain-release',
  `-- KEYS[1] domain state hash
-- ARGV[1] job id, ARGV[2] min interval ms, ARGV[3] extra wait ms asked by the server (Retry-After, 0 = none), ARGV[4] idle ttl ms
-- Records the end of the job's request; returns the earliest start of the next request (ms).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000)
local interval, extra = tonumber(ARGV[2]), tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'holder', 'last', 'next')
if s[1] == ARGV[1] then redis.call('HDEL', KEYS[1], 'holder', 'holderUntil') end
local last = math.max(tonumber(s[2]) or 0, now, now + extra - interval)
local nextFree = math.max(tonumber(s[3]) or 0, last + interval)
redis.call('HSET', KEYS[1], 'last', last, 'next', nextFree)
redis.call('HDEL', KEYS[1], 'r:' .. ARGV[1])
redis.call('PEXPIRE', KEYS[1], nextFree - now + tonumber(ARGV[4]))
return last + interval`,
);

/** The domain of a feed URL: its host name, lower case (the port is not part of it). */
export function domainOf(url: string): string {
  return new URL(url).hostname.toLowerCase();
}

export class DomainGate {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: { minIntervalMs: number; leaseMs: number },
  ) {}

  /** 0: send the request now (and call release afterwards); > 0: ms to wait first. */
  async acquire(domain: string, jobId: string): Promise<number> {
    const { minIntervalMs, leaseMs } = this.settings;
    const step = minIntervalMs > 0 ? minIntervalMs + Math.max(RESERVATION_MARGIN_MIN_MS, Math.round(minIntervalMs * RESERVATION_MARGIN)) : 0;
    return acquireScript.run<number>(this.redis, [this.keys.domainNextSlot(domain)], [jobId, minIntervalMs, leaseMs, IDLE_TTL_MS, MIN_WAIT_MS, step]);
  }

  /** The request of `jobId` has ended; `retryAfterMs` pushes the domain's next request back. */
  async release(domain: string, jobId: string, retryAfterMs = 0): Promise<void> {
    await releaseScript.run(this.redis, [this.keys.domainNextSlot(domain)], [jobId, this.settings.minIntervalMs, Math.round(retryAfterMs), IDLE_TTL_MS]);
  }
}
