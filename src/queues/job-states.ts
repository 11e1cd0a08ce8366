/**
 * BullMQ job states: those the job console and the metrics list, and the groups the chain
 * schedulers of feeds and crawls ask about.
 */

/** The states GET /api/queues counts and GET /api/queues/:name/jobs lists. */
export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Not started yet, and will be: ready to run (see QUEUED_STATES) or delayed until due. */
export const PENDING_STATES: ReadonlySet<string> = new Set(['delayed', 'waiting', 'prioritized', 'waiting-children']);

/** Pending and not delayed: a worker takes it as soon as one is free. */
export const QUEUED_STATES: ReadonlySet<string> = new Set(['waiting', 'prioritized', 'waiting-children']);
