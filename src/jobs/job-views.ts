/** How the job console shows a job: in a queue's listing, alone, or among the dead jobs. */
import type { Job } from 'bullmq';

export interface JobView {
  id: string;
  queue: string;
  name: string;
  state?: string;
  data: unknown;
  attemptsMade: number;
  attempts: number;
  failedReason?: string;
  stacktrace?: string[];
  returnValue?: unknown;
  createdAt: string;
  processedAt?: string;
  finishedAt?: string;
  delayUntil?: string;
  priority: number;
}

/** A dead job in the console's listings: no stack trace (the single-job view has it). */
export interface DeadJobEntry {
  id: string;
  queue: string;
  name: string;
  failedReason?: string;
  attemptsMade: number;
  attempts: number;
  createdAt: string;
  finishedAt?: string;
  data: unknown;
}

export function iso(ms: number | undefined): string | undefined {
  return ms ? new Date(ms).toISOString() : undefined;
}

export function viewJob(queue: string, job: Job, state?: string): JobView {
  return {
    id: job.id!,
    queue,
    name: job.name,
    ...(state ? { state } : {}),
    data: job.data,
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    ...(job.stacktrace?.length ? { stacktrace: job.stacktrace } : {}),
    ...(job.returnvalue !== undefined && job.returnvalue !== null ? { returnValue: job.returnvalue } : {}),
    createdAt: iso(job.timestamp)!,
    ...(job.processedOn ? { processedAt: iso(job.processedOn) } : {}),
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
    priority: job.priority ?? 0,
  };
}

export function viewDeadJob(queue: string, job: Job): DeadJobEntry {
  return {
    id: job.id!,
    queue,
    name: job.name,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    createdAt: iso(job.timestamp)!,
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
    data: job.data,
  };
}
