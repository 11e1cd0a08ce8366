/**
 * Groups of BullMQ job states the chain schedulers of feeds and crawls ask about (the states the
 * job console lists are JOB_STATES in job-inspector.ts).
 */

/** Not started yet, and will be: ready to run (see QUEUED_STATES) or delayed until due. */
export const PENDING_STATES: ReadonlySet<string> = new Set(['delayed', 'waiting', 'prioritized', 'waiting-children']);

/** Pending and not delayed: a worker takes it as soon as one is free. */
export const QUEUED_STATES: ReadonlySet<string> = new Set(['waiting', 'prioritized', 'waiting-children']);
