/**
 * A periodic task of the platform, run by the leader on the `maintenance` queue (see
 * maintenance-worker.ts):
 * one BullMQ job scheduler per task, scheduler id = job name = task name, so Bull Board lists
 * each task's schedule, its runs, their results, logs and failures.
 *
 * A domain defines its tasks (a name, a period, what one run does) and the runtime lists them
 * (src/runtime/maintenance-tasks.ts); the leader runs them. A run gets the leader's term: it
 * checks `term.isCurrent()` before each write that a stale leader must not make, and may stop
 * early on `signal` (the term ended). What it returns is the job's return value.
 */
import type { Job } from 'bullmq';
import type { LeaderTerm } from './leadership.js';
import type { Logger } from '../logging/logger.js';

export interface MaintenanceRun {
  job: Job;
  term: LeaderTerm;
  /** Aborted when the leader's term ends. */
  signal: AbortSignal;
  logger: Logger;
}

export interface MaintenanceTask {
  /** Job scheduler id and job name: lower-case words joined by dashes. */
  name: string;
  /** Period of the job scheduler; 0 means no periodic run (only the one at start, if asked). */
  everyMs: number;
  /** Also run once when a leader takes over (a start-up reconciliation, a first publication). */
  runAtStart?: boolean;
  run(run: MaintenanceRun): Promise<unknown>;
}
