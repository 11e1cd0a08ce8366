/**
 * Timing of a lease (pure). All times are local monotonic milliseconds (performance.now()).
 *
 * Redis starts a lease's TTL when it runs the SET or the renewal, which is never before the
 * command was sent. So "sent + TTL" bounds the real expiry from below, whatever the network did;
 * the safety margin covers clock-rate drift and the time a stop takes to reach the work.
 */

/** Renewal period: a third of the TTL, so two renewals may fail before the lease can expire. */
export function renewEveryMs(ttlMs: number): number {
  return Math.max(1, Math.floor(ttlMs / 3));
}

/** A tenth of the TTL (at least 50 ms). */
export function safetyMarginMs(ttlMs: number): number {
  return Math.max(50, Math.floor(ttlMs / 10));
}

/** Until when the holder may act after a successful SET or renewal sent at `sentAt`. */
export function localDeadline(sentAt: number, ttlMs: number): number {
  return sentAt + ttlMs - safetyMarginMs(ttlMs);
}

/** Retry delay after a Redis error (the lease itself stays valid until its local deadline). */
export function retryDelayMs(ttlMs: number): number {
  return Math.max(50, Math.floor(ttlMs / 10));
}

/**
 * When a competing process tries again after a refused acquisition: at the holder's expiry if
 * that comes before the next regular attempt, so a dead holder is replaced as soon as its lease
 * runs out. `holderPttl` is the PTTL Redis returned (negative: unknown).
 */
export function nextAttemptDelayMs(ttlMs: number, holderPttl: number): number {
  const every = renewEveryMs(ttlMs);
  return holderPttl >= 0 ? Math.min(every, holderPttl + 5) : every;
}
