/**
 * What a BullMQ Worker's 'error' events mean, and the level each is logged at, so that an error
 * line in the log is always something to look into.
 *
 * - Redis unreachable (a reconnect attempt, a command cut off): debug. The connection logs the
 *   outage once (RedisConnections).
 * - A job's lock is gone: its renewal failed (`could not renew lock for job <id>`), or a command
 *   that finishes the job found it missing or another worker's (`Missing lock for job <id>`,
 *   `Lock mismatch for job <id>`, `Job <id> is not in the active state`). The job is no longer
 *   this worker's: the stalled-job check hands it back (or another worker runs it already). It is
 *   expected (debug) during a stop, and for a job this worker handed back itself (moved to
 *   delayed, after which a renewal in flight cannot succeed); otherwise it is a lock lost, to an
 *   outage or a blocked event loop: warn, once per job, the lines after it about the same job at debug.
 * - Anything else: error.
 *
 * The per-job memory is bounded (the oldest entries go first); a run that starts again is no
 * longer handed back (`started`), while a lock loss is reported once per job, not per run.
 */
import type { Logger } from '../logging/logger.js';
import { dependencyDown } from '../lib/dependency-down.js';

const LOCK_GONE = [
  /^could not renew lock for job (.+)$/,
  /^Missing lock for job (\S+)\. /,
  /^Lock mismatch for job (\S+)\. /,
  /^Job (\S+) is not in the active state\. /,
];

/** Job ids remembered per kind; past this the oldest are forgotten. */
const MEMORY = 10_000;

/** A Set that forgets its oldest members past `MEMORY`. */
class RecentIds {
  private readonly ids = new Set<string>();

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    if (this.ids.size > MEMORY) this.ids.delete(this.ids.values().next().value!);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }
}

/** The id of the job whose lock `message` says is gone, or undefined. */
export function lockGoneJobId(message: string): string | undefined {
  for (const pattern of LOCK_GONE) {
    const id = pattern.exec(message)?.[1];
    if (id) return id;
  }
  return undefined;
}

export class WorkerErrorLog {
  private stopping = false;
  private readonly handedBack = new RecentIds();
  private readonly reported = new RecentIds();

  constructor(private readonly logger: Logger) {}

  /** The worker is stopping: lock losses from here on are expected. */
  stop(): void {
    this.stopping = true;
  }

  /** A run of `jobId` starts: the hand-back of an earlier run no longer applies to it. */
  started(jobId: string): void {
    this.handedBack.delete(jobId);
  }

  /** This worker is handing `jobId` back (moving it out of active): its lock goes with it. */
  handingBack(jobId: string): void {
    this.handedBack.add(jobId);
  }

  log(err: Error, queue: string): void {
    // A worker's errors are Redis's; a bare socket error (ECONNREFUSED) is one too.
    if (dependencyDown(err)) {
      this.logger.debug({ err: err.message, queue }, 'worker: redis unreachable');
      return;
    }
    const jobId = lockGoneJobId(err.message);
    if (jobId === undefined) {
      this.logger.error({ err: err.message, queue }, 'worker error');
      return;
    }
    if (this.stopping || this.handedBack.has(jobId)) {
      this.logger.debug({ err: err.message, queue, jobId }, 'job lock gone during a stop or after the job was handed back; expected');
      return;
    }
    if (this.reported.has(jobId)) {
      this.logger.debug({ err: err.message, queue, jobId }, 'job lock still lost');
      return;
    }
    this.reported.add(jobId);
    this.logger.warn(
      { err: err.message, queue, jobId },
      'job lock lost (Redis unreachable or this process paused past the lock duration); the stalled-job check hands the job back, and this run cannot finish it',
    );
  }
}
