/**
 * At least FEED_DOMAIN_MIN_INTERVAL_MS between requests to one domain, across every worker and
 * process. Per domain, one hash (keys.domainNextSlot) and one sorted set, the waiting line
 * (keys.domainLine), both under the domain's hash tag and changed only by its two scripts (feed-domain-*.lua):
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

const acquireScript = RedisScript.load('feed-domain-acquire', new URL('./feed-domain-acquire.lua', import.meta.url), {
  keys: ['state', 'line'],
  args: ['jobId', 'intervalMs', 'leaseMs', 'idleTtlMs', 'minWaitMs', 'stepMs', 'staleMs', 'handOverMaxMs', 'reserveOnly'],
});

const releaseScript = RedisScript.load('feed-domain-release', new URL('./feed-domain-release.lua', import.meta.url), {
  keys: ['state', 'line'],
  args: ['jobId', 'intervalMs', 'retryAfterMs', 'idleTtlMs', 'stepMs', 'requested'],
});

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

  private keysOf(domain: string): { state: string; line: string } {
    return { state: this.keys.domainNextSlot(domain), line: this.keys.domainLine(domain) };
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
    return acquireScript.run<number>(this.redis, this.keysOf(domain), {
      jobId,
      intervalMs: this.settings.minIntervalMs,
      leaseMs: this.settings.leaseMs,
      idleTtlMs: IDLE_TTL_MS,
      minWaitMs: MIN_WAIT_MS,
      stepMs: this.step,
      staleMs: STALE_RESERVATION_MS,
      handOverMaxMs: HAND_OVER_FALLBACK_MAX_MS,
      reserveOnly,
    });
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
    const [next, delayMs] = await releaseScript.run<[string?, number?]>(this.redis, this.keysOf(domain), {
      jobId,
      intervalMs: this.settings.minIntervalMs,
      retryAfterMs: Math.round(retryAfterMs),
      idleTtlMs: IDLE_TTL_MS,
      stepMs: this.step,
      requested,
    });
    // The gate's times are Redis's; the turn is handed on as a time on this process's clock.
    return next ? { jobId: next, at: Date.now() + Number(delayMs) } : undefined;
  }
}
