/**
 * How long a job that met an outage of Redis or the database waits before it runs again: 1 s,
 * doubling with each outage the same job meets in this process, at most 30 s, less a random
 * fraction (JOB_BACKOFF_JITTER) so that the jobs of one outage do not all come back at once.
 * The count per job is this process's (bounded: the oldest jobs are forgotten first); a job
 * taken by another process starts again at 1 s, which only makes it look sooner.
 */
export const OUTAGE_FIRST_DELAY_MS = 1000;
export const OUTAGE_MAX_DELAY_MS = 30_000;
const MEMORY = 10_000;

export class OutageBackoff {
  private readonly met = new Map<string, number>();

  constructor(private readonly jitter: number) {}

  /** The wait before the next run of `jobId`, and whether this is the first outage it met here. */
  next(jobId: string): { delayMs: number; first: boolean } {
    const before = this.met.get(jobId) ?? 0;
    this.met.delete(jobId);
    this.met.set(jobId, before + 1);
    if (this.met.size > MEMORY) this.met.delete(this.met.keys().next().value!);
    const full = Math.min(OUTAGE_MAX_DELAY_MS, OUTAGE_FIRST_DELAY_MS * 2 ** Math.min(before, 16));
    return { delayMs: Math.round(full * (1 - this.jitter * Math.random())), first: before === 0 };
  }

  /** The job ended (completed or failed): its count goes. */
  forget(jobId: string): void {
    this.met.delete(jobId);
  }
}
