/**
 * The login rate limit's counts in this process's memory: what the limit holds to while Redis is
 * down and AUTH_FAIL_OPEN=true lets logins go on (login-rate-limit.ts). The same rule as the Redis
 * script (login-count-attempt.lua): an attempt is counted only when its address and its (user
 * name, address) pair are both below their limits, and a window runs from its first attempt.
 * Per process, so N API processes allow N times the limit between them while Redis is down.
 *
 * Bounded: at most MAX_ENTRIES counts; when full, expired ones go first, then the oldest (an
 * attacker spreading over more addresses than that still meets the limit on password checks at
 * once, password-hasher.ts). Pure: no I/O; the clock is passed in.
 */
export const MAX_ENTRIES = 100_000;

export interface LoginLimits {
  addressMax: number;
  pairMax: number;
  windowSeconds: number;
}

export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Count {
  n: number;
  endsAt: number;
}

export class LoginAttemptCounts {
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly limits: LoginLimits,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** Counts an attempt under both keys when both are below their limits. */
  count(addressKey: string, pairKey: string, now: number): AttemptVerdict {
    const address = this.live(addressKey, now);
    const pair = this.live(pairKey, now);
    let waitMs = 0;
    if (address && address.n >= this.limits.addressMax) waitMs = address.endsAt - now;
    if (pair && pair.n >= this.limits.pairMax) waitMs = Math.max(waitMs, pair.endsAt - now);
    if (waitMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    this.raise(addressKey, address, now);
    this.raise(pairKey, pair, now);
    return { allowed: true };
  }

  /** Takes an attempt back from both keys (a successful login); never below zero. */
  giveBack(addressKey: string, pairKey: string, now: number): void {
    for (const key of [addressKey, pairKey]) {
      const c = this.live(key, now);
      if (c && c.n > 0) c.n--;
    }
  }

  get size(): number {
    return this.counts.size;
  }

  private live(key: string, now: number): Count | undefined {
    const c = this.counts.get(key);
    if (c && c.endsAt <= now) {
      this.counts.delete(key);
      return undefined;
    }
    return c;
  }

  private raise(key: string, current: Count | undefined, now: number): void {
    if (current) {
      current.n++;
      return;
    }
    if (this.counts.size >= this.maxEntries) this.makeRoom(now);
    this.counts.set(key, { n: 1, endsAt: now + this.limits.windowSeconds * 1000 });
  }

  /** Frees a tenth of the room at once (the sweep is O(entries), so not on every new key). */
  private makeRoom(now: number): void {
    const target = Math.floor(this.maxEntries * 0.9);
    for (const [key, c] of this.counts) if (c.endsAt <= now) this.counts.delete(key);
    // Still too full: the oldest first (a Map iterates in insertion order).
    for (const key of this.counts.keys()) {
      if (this.counts.size <= target) break;
      this.counts.delete(key);
    }
  }
}
