/**
 * At least FEED_DOMAIN_MIN_INTERVAL_MS between requests to one domain, across every worker and
 * process. Per domain, one hash (keys.domainNextSlot) and one sorted set, the waiting line
 * (keys.domainLine), both under the domain's hash tag and changed only by the scripts below:
 *
 *   hash  next         the next free reservation slot (ms)
 *         last         when the domain's last request ended (ms, rounded up), or after a
 *                      Retry-After the time the server asked us to wait for, minus the interval
 *         holder       job id of the request in flight, with holderUntil (a lease: a crashed
 *                      holder frees the domain after FEED_FETCH_TIMEOUT_MS + a margin)
 *   line  job → slot   the jobs waiting for their turn, by reserved slot (FIFO per domain)
 *
 * reserve: a job about to be queued takes the next free slot, so that it can be queued delayed
 * until its turn (a burst of jobs for one domain then wakes each job once, at its turn).
 * acquire: a job first reserves the next free slot (unless it did when it was queued). It may send its request when its slot has
 * come, nobody is in flight and `last + interval` has passed; it then becomes the holder and
 * leaves the line. Otherwise it gets the wait in ms, and the caller delays the job in BullMQ for
 * that long (no worker slot sleeps).
 * release: the holder records when its request ended; the next request starts at least one
 * interval later. When the first job in line has another slot than that turn, its slot moves to
 * the turn and release returns it, so the caller moves that delayed job to exactly then (a
 * hand-over: the job neither wakes up early only to be delayed again, nor sleeps past its turn).
 * cancel: a holder that did not send its request (its feed is gone or locked) gives the turn
 * back without recording anything; the first job in line is handed the turn the same way.
 *
 * The spacing is counted from the end of one exchange (after the server has answered) to the
 * start of the next, so it holds as measured at the server whatever the scheduling jitter of the
 * processes, and all times come from Redis's clock (TIME).
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
/** A place in line this far in the past belongs to a job that is gone; it is dropped. */
const STALE_RESERVATION_MS = 600_000;
/**
 * The most a waiting job's fallback delay is made later than its slot (see acquire). Below the
 * scheduler's TURN_TOLERANCE_MS, so that a hand-over still finds the job waiting for its turn.
 */
const HAND_OVER_FALLBACK_MAX_MS = 3_000;

const acquireScript = new RedisScript(
  'feed-domain-acquire',
  `-- KEYS[1] domain state hash, KEYS[2] the domain's waiting line (zset job -> slot)
-- ARGV[1] job id, ARGV[2] min interval ms, ARGV[3] holder lease ms, ARGV[4] idle ttl ms, ARGV[5] min wait ms,
-- ARGV[6] reservation step ms (the interval plus a margin for the exchange itself), ARGV[7] stale reservation ms,
-- ARGV[8] longest extra wait of a job whose turn comes by a hand-over, ARGV[9] 1 = only reserve a place in line
-- Returns 0 when the job may send its request now (it is the holder; with ARGV[9], it may take the
-- turn as soon as it runs), else ms to wait.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, interval, lease, step = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
local s = redis.call('HMGET', KEYS[1], 'next', 'last', 'holder', 'holderUntil')
local nextFree = tonumber(s[1]) or 0
local last = tonumber(s[2])
local holder = s[3]
if holder and (tonumber(s[4]) or 0) <= now then holder = nil end
if holder == job then
  redis.call('HSET', KEYS[1], 'holderUntil', now + lease)
  return 0
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[7]))
local slot = tonumber(redis.call('ZSCORE', KEYS[2], job))
local fresh = not slot
if fresh then
  slot = math.max(nextFree, now)
  nextFree = slot + step
  redis.call('ZADD', KEYS[2], slot, job)
  redis.call('HSET', KEYS[1], 'next', nextFree)
end
local earliest = slot
if last and last + interval > earliest then earliest = last + interval end
local ttl = math.max(nextFree - now, 0) + tonumber(ARGV[4])
if not holder and now >= earliest and ARGV[9] == '1' then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return 0
end
if not holder and now >= earliest then
  redis.call('HSET', KEYS[1], 'holder', job, 'holderUntil', now + lease, 'next', math.max(nextFree, now + step))
  redis.call('ZREM', KEYS[2], job)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  return 0
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local wait = earliest - now
-- Someone is in flight: the next start is at least one interval after it ends.
if holder and wait < interval then wait = interval end
-- With a request in flight, or (for a job just joining the line) jobs ahead in line, the turn
-- comes by a hand-over (each release or cancel moves the first job in line to the domain's next
-- turn), so this wait is only a fallback: it is made later by half an interval per request ahead
-- (slots assume short exchanges; real ones drift later), so that the job does not wake before
-- its turn only to be delayed again. A job already in line with nobody in flight gets no
-- hand-over before someone takes the turn: it waits for exactly its own place.
if holder or fresh then
  local ahead = redis.call('ZRANK', KEYS[2], job) + (holder and 1 or 0)
  wait = wait + math.min(ahead * interval / 2, tonumber(ARGV[8]))
end
if wait < tonumber(ARGV[5]) then wait = tonumber(ARGV[5]) end
return math.floor(wait)`,
);

const releaseScript = new RedisScript(
  'feed-domain-release',
  `-- KEYS[1] domain state hash, KEYS[2] the domain's waiting line
-- ARGV[1] job id, ARGV[2] min interval ms, ARGV[3] extra wait ms asked by the server (Retry-After, 0 = none), ARGV[4] idle ttl ms,
-- ARGV[5] reservation step ms, ARGV[6] 1 when the job's request was made (its end is recorded), 0 when its turn goes back unused
-- Returns {next job id, ms until its turn} when the first job in line has a slot other than the
-- domain's next turn (its slot is moved to that turn) and no other request is in flight, else {}.
local t = redis.call('TIME')
local interval, extra = tonumber(ARGV[2]), tonumber(ARGV[3])
-- A recorded end is rounded up so the interval is never short; with no interval, or nothing to
-- record, that would only make an acquire in the same millisecond wait.
local round = (interval > 0 and ARGV[6] == '1') and math.ceil or math.floor
local now = tonumber(t[1]) * 1000 + round(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'holder', 'last', 'next', 'holderUntil')
local holder = s[1]
if holder == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'holder', 'holderUntil')
  holder = nil
elseif holder and (tonumber(s[4]) or 0) <= now then
  holder = nil
end
local last = tonumber(s[2])
if ARGV[6] == '1' then
  last = math.max(last or 0, now, now + extra - interval)
  redis.call('HSET', KEYS[1], 'last', last)
end
local turn = last and math.max(now, last + interval) or now
local nextFree = math.max(tonumber(s[3]) or 0, turn)
redis.call('HSET', KEYS[1], 'next', nextFree)
redis.call('ZREM', KEYS[2], ARGV[1])
local ttl = nextFree - now + tonumber(ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
if holder then return {} end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[1] and tonumber(first[2]) ~= turn then
  redis.call('ZADD', KEYS[2], turn, first[1])
  -- a reservation made from now on comes after the one just moved
  if nextFree < turn + tonumber(ARGV[5]) then redis.call('HSET', KEYS[1], 'next', turn + tonumber(ARGV[5])) end
  return {first[1], turn - now}
end
return {}`,
);

/** The domain of a feed URL: its host name, lower case (the port is not part of it); undefined for a non-URL. */
export function domainOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

export interface HandOver {
  /** The job first in line, whose turn comes at `at` (ms since the epoch, this process's clock). */
  jobId: string;
  at: number;
}

export class DomainGate {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: { minIntervalMs: number; leaseMs: number },
  ) {}

  private keysOf(domain: string): string[] {
    return [this.keys.domainNextSlot(domain), this.keys.domainLine(domain)];
  }

  private get step(): number {
    const interval = this.settings.minIntervalMs;
    return interval > 0 ? interval + Math.max(RESERVATION_MARGIN_MIN_MS, Math.round(interval * RESERVATION_MARGIN)) : 0;
  }

  /** 0: send the request now (and call release afterwards); > 0: ms to wait first. */
  acquire(domain: string, jobId: string): Promise<number> {
    return this.run(domain, jobId, false);
  }

  /**
   * Gives a job about to be queued its place in line, as its first acquire would: returns the ms
   * until its turn (0: it may take the turn as soon as it runs). With no interval there is no line
   * worth keeping, and nothing is reserved.
   */
  async reserve(domain: string, jobId: string): Promise<number> {
    return this.settings.minIntervalMs > 0 ? this.run(domain, jobId, true) : 0;
  }

  private run(domain: string, jobId: string, reserveOnly: boolean): Promise<number> {
    const { minIntervalMs, leaseMs } = this.settings;
    const args = [jobId, minIntervalMs, leaseMs, IDLE_TTL_MS, MIN_WAIT_MS, this.step, STALE_RESERVATION_MS, HAND_OVER_FALLBACK_MAX_MS, reserveOnly ? 1 : 0];
    return acquireScript.run<number>(this.redis, this.keysOf(domain), args);
  }

  /**
   * The request of `jobId` has ended; `retryAfterMs` pushes the domain's next request back.
   * Returns the job to move to the domain's next turn, if one is waiting for another time.
   */
  release(domain: string, jobId: string, retryAfterMs = 0): Promise<HandOver | undefined> {
    return this.end(domain, jobId, true, retryAfterMs);
  }

  /**
   * `jobId` gives back a turn it took without making its request (the feed is gone, or locked by
   * another job), or leaves the line (its job is gone, or waits for its schedule, not its turn):
   * nothing is recorded, and unless another request is in flight the first job in line is handed
   * the domain's next turn.
   */
  cancel(domain: string, jobId: string): Promise<HandOver | undefined> {
    return this.end(domain, jobId, false, 0);
  }

  private async end(domain: string, jobId: string, requested: boolean, retryAfterMs: number): Promise<HandOver | undefined> {
    const args = [jobId, this.settings.minIntervalMs, Math.round(retryAfterMs), IDLE_TTL_MS, this.step, requested ? 1 : 0];
    const [next, delayMs] = await releaseScript.run<[string?, number?]>(this.redis, this.keysOf(domain), args);
    // The gate's times are Redis's; the turn is handed on as a time on this process's clock.
    return next ? { jobId: next, at: Date.now() + Number(delayMs) } : undefined;
  }
}
