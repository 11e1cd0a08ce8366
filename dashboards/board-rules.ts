/**
 * What Bull Board's own buttons may do to each queue, so that they keep the platform's rules (no I/O:
 * the decisions only; dashboards/board-actions.ts applies them). The invariants they protect:
 *
 * - one pending crawl per IP, one pending refresh per feed (DESIGN invariant 3): the jobs of a
 *   chain (`crawl`, `crawl-result`, `feed-refresh`, the queues whose definition refuses manual
 *   adds) are added, edited and removed by their domain only; a button that would add a second
 *   pending job, drop the pending one or rewrite what the chain relies on is refused (409, naming
 *   the domain route that does it the right way). Retries and promotes are not refused: they go
 *   through the job console's chain handlers (src/queues/job-inspector.ts);
 * - platform-only queues: `maintenance` runs come from the leader's job schedulers (one per task,
 *   its period a setting): no hand-made run, and its schedulers are not removed or re-timed here;
 * - nothing added or edited here leaves a job that cannot run: data is checked against the queue's
 *   payload schema (400 naming the field), and job options are limited to those that cannot break
 *   a job (delay, priority, or the queue's own defaults, which "Duplicate" sends back).
 */
import { isDeepStrictEqual } from 'node:util';
import type { JobsOptions } from 'bullmq';
import { ConflictError, InvalidInputError } from '../src/errors.js';
import { queues, type QueueKey } from '../src/queues/definitions.js';

/** Queues only the platform adds jobs to, beyond the chained ones (their definitions' manualAdd). */
const PLATFORM_ONLY: Partial<Record<QueueKey, string>> = {
  maintenance: "maintenance runs come from the leader's job schedulers, one per task (its period is a setting); the Schedulers view runs one now ('Run now')",
};

/**
 * Job data the platform writes, by queue: a change to one of these fields is refused (`*`: every
 * field). A crawl's IP, task and keyword come from its IP (PATCH /api/ips/:id keeps the pending
 * crawl's keyword in step); a result's data is the crawl's; a refresh's feed, trigger and domain
 * decide its place in the feed's chain and its domain's line; a maintenance run is its task.
 */
const PLATFORM_FIELDS: Partial<Record<QueueKey, readonly string[] | '*'>> = {
  crawl: ['ipId', 'taskId', 'keyword'],
  crawlResult: '*',
  feedRefresh: '*',
  maintenance: '*',
};

/** Job states a chained job may be removed in: over (its chain has moved on, or will at its interval). */
const REMOVABLE_CHAINED = new Set(['completed', 'failed']);

/** BullMQ's largest priority (2^21) and a month of delay, as POST /api/queues/:name/jobs. */
const MAX_PRIORITY = 2_097_152;
const MAX_DELAY_MS = 30 * 86_400_000;

/** For a queue whose jobs form a chain, what schedules its work the right way. */
export function chainRule(key: QueueKey): string | undefined {
  const def = queues[key];
  return def.manualAdd?.refused;
}

/** Why "Add job" is refused on this queue, or undefined when it is allowed. */
export function addRefusal(key: QueueKey): ConflictError | undefined {
  const name = queues[key].name;
  const chain = chainRule(key);
  if (chain) return new ConflictError('chained_queue', `jobs of "${name}" belong to a chain: ${chain}`, { field: 'queueName' });
  const only = PLATFORM_ONLY[key];
  if (only) return new ConflictError('platform_queue', `only the platform adds jobs to "${name}": ${only}`, { field: 'queueName' });
  return undefined;
}

/**
 * The options of a job added from the board: `delay` and `priority` (bounded), and any other
 * option only with the queue's default value (what "Duplicate" sends back). Anything else (a job
 * id, a repeat, a parent, deduplication, other attempts) is refused naming `options.<key>`.
 */
export function addOptions(options: Record<string, unknown>, defaults: JobsOptions): { delay?: number; priority?: number } {
  const out: { delay?: number; priority?: number } = {};
  for (const [name, value] of Object.entries(options)) {
    const field = `options.${name}`;
    if (name === 'delay' || name === 'priority') {
      const max = name === 'delay' ? MAX_DELAY_MS : MAX_PRIORITY;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
        throw new InvalidInputError('invalid_option', `${name} must be an integer from 0 to ${max}`, { field });
      if (value > 0) out[name] = value;
      continue;
    }
    if (!isDeepStrictEqual(value, (defaults as Record<string, unknown>)[name]))
      throw new InvalidInputError('invalid_option', `the board adds jobs with the queue's own options; only delay and priority may be set (remove "${name}")`, {
        field,
      });
  }
  return out;
}

/**
 * Checks an edit of a job's data (already valid for the queue's schema) against the fields the
 * platform writes; throws naming the first field changed (`jobData.<field>`).
 */
export function checkDataEdit(key: QueueKey, before: unknown, after: unknown): void {
  const fixed = PLATFORM_FIELDS[key];
  if (!fixed) return;
  const name = queues[key].name;
  const was = (before ?? {}) as Record<string, unknown>;
  const now = (after ?? {}) as Record<string, unknown>;
  const fields = fixed === '*' ? [...new Set([...Object.keys(was), ...Object.keys(now)])] : fixed;
  const changed = fields.find((f) => !isDeepStrictEqual(was[f], now[f]));
  if (changed === undefined) return;
  const why = chainRule(key) ?? PLATFORM_ONLY[key] ?? '';
  throw new ConflictError('platform_field', `"${changed}" of a ${name} job is written by the platform, not edited here: ${why}`, {
    field: `jobData.${changed}`,
  });
}

/** Why removing a job in `state` is refused (a chained job still pending or running), or undefined. */
export function removeRefusal(key: QueueKey, state: string): ConflictError | undefined {
  const chain = chainRule(key);
  if (!chain || REMOVABLE_CHAINED.has(state)) return undefined;
  return new ConflictError(
    'chained_job',
    `a ${state} job of "${queues[key].name}" holds its chain's place; only completed or failed ones are removed here: ${chain}`,
    {
      field: 'jobId',
    },
  );
}

/** Why cleaning every job of `status` is refused, or undefined. */
export function cleanRefusal(key: QueueKey, status: string): ConflictError | undefined {
  const chain = chainRule(key);
  if (!chain || REMOVABLE_CHAINED.has(status)) return undefined;
  return new ConflictError(
    'chained_queue',
    `the ${status} jobs of "${queues[key].name}" hold their chains' places; only completed or failed ones are cleaned here: ${chain}`,
    {
      field: 'queueStatus',
    },
  );
}

/** Actions on a whole queue (or its schedulers) that the platform's queues refuse. */
export type QueueAction = 'empty' | 'obliterate' | 'remove-unprocessed-children' | 'remove-scheduler' | 'update-scheduler';

/** Why a queue-wide action is refused, or undefined. */
export function queueActionRefusal(key: QueueKey, action: QueueAction): ConflictError | undefined {
  const name = queues[key].name;
  const chain = chainRule(key);
  const only = PLATFORM_ONLY[key];
  switch (action) {
    case 'empty':
    case 'obliterate':
      if (chain)
        return new ConflictError('chained_queue', `${action} would drop the pending jobs of every chain of "${name}": ${chain}`, { field: 'queueName' });
      if (only) return new ConflictError('platform_queue', `${action} would drop the platform's own jobs of "${name}": ${only}`, { field: 'queueName' });
      return undefined;
    case 'remove-unprocessed-children':
      // A result's unprocessed child is its crawl: removing it would drop the IP's crawl.
      return chain ? new ConflictError('chained_job', `the children of "${name}" jobs are their chains' crawls: ${chain}`, { field: 'jobId' }) : undefined;
    case 'remove-scheduler':
    case 'update-scheduler':
      return only ? new ConflictError('platform_queue', `the schedulers of "${name}" are the platform's: ${only}`, { field: 'schedulerId' }) : undefined;
  }
}
