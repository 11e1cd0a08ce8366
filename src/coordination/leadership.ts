/**
 * Leadership as the rest of the platform sees it (ctx.leadership, implemented by
 * lease-manager.ts): singleton tasks, each run by at most one process at a time, the holder of
 * its lease, for the length of a term.
 */

/** One term of leadership of a singleton task: from acquiring its lease to losing or releasing it. */
export interface LeaderTerm {
  /** The singleton task's name (its lease's). */
  readonly task: string;
  /** Fencing token: grows with every new term of this task, across instances. */
  readonly token: number;
  /** What the task's lease key holds during this term: a fenced write in Lua compares the key to it. */
  readonly value: string;
  /** Aborted the moment the term ends (renewal lost, local deadline passed, release, shutdown). */
  readonly signal: AbortSignal;
  /**
   * Cheap local check (no Redis): false once the lease may have expired. Call it right before
   * every singleton action; a process resumed after a pause sees false before anything else.
   */
  isCurrent(): boolean;
}

export interface Leadership {
  /**
   * True while this instance holds the lease of singleton task `task` and its local deadline has
   * not passed. Without a name: the lease of LEADER_TASK, i.e. whether this instance is "the leader".
   */
  isLeader(task?: string): boolean;
  /**
   * Registers a singleton task: this process competes for the lease of `task`; while it holds it,
   * `start` has run, and the returned stop function is awaited as soon as the lease is lost or
   * released. Several registrations of one name share one lease.
   */
  whileLeader(task: string, start: (term: LeaderTerm) => Promise<() => Promise<void>>): void;
  /** The terms this instance holds now. */
  held(): { task: string; token: number; since: Date }[];
}

/**
 * The singleton task whose holder is "the leader" of the platform (GET /api/cluster, the
 * is-leader gauge); the `cluster` role registers it and runs the maintenance queue under it.
 */
export const LEADER_TASK = 'cluster';
