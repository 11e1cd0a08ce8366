/**
 * Logs an outage of a dependency once when it begins and once when it ends, however many calls
 * fail meanwhile: callers report every failure and every success, the log gets two lines per
 * outage instead of one per failed call (or per reconnect attempt).
 *
 * States: up ──failure──▶ down (began logged) ──success──▶ up (ended logged). Further failures
 * while down and successes while up log nothing. Starts up.
 */
export interface OutageReport<C> {
  /** The first failure of an outage. */
  began(cause: C): void;
  /** The first success after it, with how many failures it counted. */
  ended(failures: number): void;
}

export class OutageLog<C = unknown> {
  /** Failures since the outage began; down while above 0. */
  private failed = 0;

  constructor(private readonly report: OutageReport<C>) {}

  /** Whether the last report was a failure. */
  get isDown(): boolean {
    return this.failed > 0;
  }

  /** Failures reported since the outage began (0 while up). */
  get failures(): number {
    return this.failed;
  }

  failure(cause: C): void {
    if (!this.isDown) this.report.began(cause);
    this.failed++;
  }

  success(): void {
    if (this.isDown) this.report.ended(this.failed);
    this.failed = 0;
  }
}
