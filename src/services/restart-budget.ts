/**
 * When to restart an embedded service that died, and when to give up (a pure leaf: time is
 * passed in).
 *
 * Attempts come in episodes. An episode begins when the service dies after it had run steadily
 * for `steadyMs`; attempt n of the episode (0-based) waits min(firstDelayMs * 2^n, maxDelayMs)
 * first. A service that dies again within `steadyMs` of its last start continues the episode,
 * so a crash loop spends the budget as failed starts do. Once `attempts` attempts of one episode
 * are spent, `next()` answers undefined: give up.
 *
 * The defaults (8 attempts: 0.25, 0.5, 1, 2, 4, 8, 8, 8 s, about 32 s in all) outlast what keeps a
 * PostgreSQL from starting again after its postmaster was killed: its orphaned backends still
 * hold the old shared memory until they notice and exit (they wait out a running statement,
 * bounded by DATABASE_STATEMENT_TIMEOUT_MS, 30 s by default).
 *
 * Once the process is stopping, the backoff no longer applies (supervised-service.ts): attempts
 * come every `stoppingDelayMs` for at most `stoppingWindowMs`, so a stop is not held up for long.
 */
export interface RestartPolicy {
  /** Attempts per episode; 0: give up at the first death. */
  attempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
  /** Up this long after a start, the next death begins a new episode. */
  steadyMs: number;
  /** While the process stops: the time between attempts, and how long it keeps trying. */
  stoppingDelayMs: number;
  stoppingWindowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  attempts: 8,
  firstDelayMs: 250,
  maxDelayMs: 8000,
  steadyMs: 60_000,
  stoppingDelayMs: 250,
  stoppingWindowMs: 10_000,
};

export class RestartBudget {
  private used = 0;
  private startedAt: number;

  constructor(
    private readonly policy: RestartPolicy,
    now: number,
  ) {
    this.startedAt = now;
  }

  /** The service died at `now`: a new episode unless it had not yet run steadily. */
  died(now: number): void {
    if (now - this.startedAt >= this.policy.steadyMs) this.used = 0;
  }

  /** Spends one attempt: the delay to wait before it, or undefined when the episode's attempts are spent. */
  next(): number | undefined {
    if (this.used >= this.policy.attempts) return undefined;
    const delay = Math.min(this.policy.firstDelayMs * 2 ** this.used, this.policy.maxDelayMs);
    this.used++;
    return delay;
  }

  /** Attempts spent in the current episode. */
  get spent(): number {
    return this.used;
  }

  /** The service answers again (started at `now`). */
  started(now: number): void {
    this.startedAt = now;
  }
}
