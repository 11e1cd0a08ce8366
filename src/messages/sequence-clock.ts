/**
 * The order of acceptance within a session.
 *
 * `seq` is a hybrid logical clock: microseconds since the epoch, strictly increasing within a
 * process (two messages in the same microsecond get consecutive values; a clock that steps back
 * never makes `seq` go back). It is assigned once, when the API accepts a message, and travels with
 * the message to the cache and, through the persist job or the direct write, to the DB. So the
 * same number orders a session everywhere, including messages accepted while Redis was down.
 *
 * Across API processes the order rests on synchronised clocks, made causal where it matters:
 * every read feeds the newest `seq` it saw back into `observe`, so a message written after
 * reading a session (the usual chat turn) sorts after everything that read returned, whichever
 * process served it. Two messages sent to one session at the same moment through two processes
 * whose clocks differ have no order but the one their `seq` gives them.
 *
 * Values stay below 2^53 (safe JS integers) until about the year 2255.
 */
export class SequenceClock {
  private last = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  /** The next sequence number: at least the current time in µs, always above the previous one. */
  next(): number {
    const now = Math.floor(this.nowMs() * 1000);
    this.last = now > this.last ? now : this.last + 1;
    return this.last;
  }

  /** Moves the clock past a sequence number seen in a read (from any process). */
  observe(seq: number): void {
    if (Number.isSafeInteger(seq) && seq > this.last) this.last = seq;
  }
}
