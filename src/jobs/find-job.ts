/**
 * A job by an id from outside (a route's path, a Bull Board button). Only a key that holds a job
 * is one: an id naming one of BullMQ's own keys, a key of another type (WRONGTYPE: lists, sets,
 * streams, locks) or a hash that is not a job (no name or timestamp, e.g. a `<job>:processed`
 * hash) is no job.
 */
import type { Job, Queue } from 'bullmq';
import { NotFoundError, toError } from '../errors.js';

/**
 * The names BullMQ gives a queue's own keys (`<prefix>:<queue>:<name>`, bullmq's QueueKeys), which
 * share the key space of job ids (`<prefix>:<queue>:<id>`): a job id equal to one of them would name
 * the queue's own data (`meta`: its settings and pause flag), never a job.
 */
const BULLMQ_KEY_NAMES = new Set([
  '',
  'active',
  'wait',
  'waiting-children',
  'paused',
  'id',
  'delayed',
  'prioritized',
  'stalled-check',
  'completed',
  'failed',
  'stalled',
  'repeat',
  'limiter',
  'meta',
  'events',
  'pc',
  'marker',
  'de',
]);

/** The job `id` of queue `q`, or undefined. */
export async function findJob(q: Queue, id: string): Promise<Job | undefined> {
  if (BULLMQ_KEY_NAMES.has(id)) return undefined;
  let job: Job | undefined;
  try {
    job = await q.getJob(id);
  } catch (err) {
    if (toError(err).message.startsWith('WRONGTYPE')) return undefined;
    throw err;
  }
  if (!job || typeof job.name !== 'string' || !job.timestamp) return undefined;
  return job;
}

/** The job `id` of queue `q`, or a 404 `unknown_job`. */
export async function jobOr404(q: Queue, id: string): Promise<Job> {
  const job = await findJob(q, id);
  if (!job) throw new NotFoundError('unknown_job', `no job "${id}" in queue "${q.name}"`, { field: 'id' });
  return job;
}
