/**
 * Runs an action at most once per interval per key, and never drops the last request: a request
 * that arrives while the key is cooling down is run once at the end of the interval (trailing
 * edge). Request paths use it to queue follow-up jobs: thousands of pool pops a second ask for a
 * refill or a consumed-marking job a few times a second, message appends for a drain of their
 * persist buffer, and the requests of the last interval are still followed by one.
 */
export class TrailingThrottle {
  private readonly keys = new Map<string, { until: number; pending: boolean; timer?: NodeJS.Timeout }>();
  private closed = false;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `action` now, or once when the key's interval ends. `action` must not throw. */
  request(key: string, action: () => void): void {
    if (this.closed) return;
    const t = this.now();
    const state = this.keys.get(key);
    if (!state || t >= state.until) {
      if (state?.timer) clearTimeout(state.timer);
      this.keys.set(key, { until: t + this.intervalMs, pending: false });
      action();
      return;
    }
    if (state.pending) return;
    state.pending = true;
    state.timer = setTimeout(
      () => {
        this.keys.delete(key);
        if (!this.closed) this.request(key, action);
      },
      Math.max(0, state.until - t),
    );
    state.timer.unref();
  }

  /** Drops pending requests. Idempotent. */
  close(): void {
    this.closed = true;
    for (const s of this.keys.values()) if (s.timer) clearTimeout(s.timer);
    this.keys.clear();
  }
}
