import { z } from 'zod';
import { JOB_STATES, type JobInspector } from '../../queues/job-inspector.js';
import { queues } from '../../queues/definitions.js';
import { decimalInt, defineRoute, type AnyRoute } from '../route.js';

const queueName = z.string().min(1).max(100);
const jobId = z.string().min(1).max(256);
const queueParams = z.object({ name: queueName });
const jobParams = z.object({ name: queueName, id: jobId });
const INDEX_MAX = 1_000_000_000;
const listQuery = z
  .strictObject({
    state: z.enum(JOB_STATES).default('failed'),
    start: decimalInt(0, INDEX_MAX).default(0),
    end: decimalInt(0, INDEX_MAX).default(49),
  })
  .refine((q) => q.end >= q.start, { message: 'end must not be before start', path: ['end'] })
  .refine((q) => q.end - q.start < 1000, { message: 'at most 1000 jobs per page', path: ['end'] });
const deadFilter = {
  queue: queueName.optional(),
  q: z.string().min(1).max(200).optional(),
};
const deadQuery = z.strictObject({ ...deadFilter, offset: decimalInt(0, INDEX_MAX).default(0), limit: decimalInt(1, 1000).default(100) });
const deadRetryBody = z.strictObject(deadFilter);
const deadRemoveQuery = z
  .strictObject(deadFilter)
  .refine((f) => f.queue !== undefined || f.q !== undefined, { message: 'give queue and/or q: removing every dead job needs one of them', path: ['queue'] });
/** BullMQ's largest priority (2^21) and a month of delay. */
const addBody = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  data: z.unknown(),
  delay: z
    .number()
    .int('must be an integer')
    .min(0)
    .max(30 * 86_400_000)
    .optional(),
  priority: z.number().int('must be an integer').min(0).max(2_097_152).optional(),
});
const taskParams = z.object({ task_id: jobId });
const taskQuery = z.strictObject({ queue: queueName.optional() });

/**
 * Jobs and dead jobs (admins only), and task lookup: an admin sees every task, a user only the
 * refreshes of its own feeds (any other task answers 404 as if it did not exist).
 * `inspector`: the job console over every queue (wired with the chains' replays by the runtime);
 * `ownsFeed`: whether a feed is the user's.
 */
export function jobRoutes(inspector: JobInspector, ownsFeed: (userId: number, feedId: number) => Promise<boolean>): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/queues',
      tag: 'jobs',
      access: 'admin',
      summary:
        'Every queue with its job counts by state; a partitioned queue (QUEUE_SHARDS) sums its partitions and lists them in `partitions`, with its `family`.',
      responses: { 200: { description: '{queues: [{name, counts, paused, family?, partitions?}]}' } },
      handler: async () => ({ body: { queues: await inspector.counts() } }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/queues/:name/jobs',
      tag: 'jobs',
      access: 'admin',
      summary: 'Jobs of one queue in one state, by index range.',
      params: queueParams,
      query: listQuery,
      responses: {
        200: { description: 'jobs' },
        404: { description: 'unknown queue (a partitioned queue: name a partition, e.g. crawl.3-of-6; 404 partitioned_queue names them)' },
      },
      handler: async ({ params, query }) => ({ body: await inspector.list(params.name, query.state, query.start, query.end) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/queues/:name/jobs',
      tag: 'jobs',
      access: 'admin',
      summary:
        "Add a job by hand: data checked against the queue's payload schema; queues whose jobs form a chain (crawl, crawl-result, feed-refresh) answer 409 naming the route to use.",
      params: queueParams,
      body: addBody,
      responses: {
        201: { description: 'the job' },
        400: { description: 'data does not fit the payload schema (field data.<path>)' },
        404: { description: 'unknown queue' },
        409: { description: 'a chained queue' },
      },
      handler: async ({ params, body }) => ({
        status: 201,
        body: await inspector.add(params.name, body as { name?: string; data: unknown; delay?: number; priority?: number }),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/queues/:name/pause',
      tag: 'jobs',
      access: 'admin',
      summary: 'Pause a queue: no worker takes its jobs until it is resumed (running jobs finish).',
      params: queueParams,
      responses: { 200: { description: '{queue, paused}' }, 404: { description: 'unknown queue' } },
      handler: async ({ params }) => ({ body: await inspector.setPaused(params.name, true) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/queues/:name/resume',
      tag: 'jobs',
      access: 'admin',
      summary: 'Resume a paused queue.',
      params: queueParams,
      responses: { 200: { description: '{queue, paused}' }, 404: { description: 'unknown queue' } },
      handler: async ({ params }) => ({ body: await inspector.setPaused(params.name, false) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/queues/:name/jobs/:id',
      tag: 'jobs',
      access: 'admin',
      summary: 'One job with its state, data, result or failure.',
      params: jobParams,
      responses: {
        200: { description: 'job' },
        404: {
          description:
            "unknown queue or job (an id naming one of BullMQ's own keys is no job) (a partitioned queue: name a partition, e.g. crawl.3-of-6; 404 partitioned_queue names them)",
        },
      },
      handler: async ({ params }) => ({ body: await inspector.get(params.name, params.id) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/queues/:name/jobs/:id/retry',
      tag: 'jobs',
      access: 'admin',
      summary:
        'Retry a failed (or completed) job, with its full attempts; a crawl or feed refresh takes its place in its chain (a completed one is not retried).',
      params: jobParams,
      responses: {
        200: { description: 'job queued again' },
        404: { description: 'unknown queue or job' },
        409: { description: 'job not failed or completed; or a completed job of a chain (finished_link: its domain route runs the chain now)' },
      },
      handler: async ({ params }) => ({ body: await inspector.retry(params.name, params.id) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/queues/:name/jobs/:id',
      tag: 'jobs',
      access: 'admin',
      summary: 'Delete a job (not while it runs).',
      params: jobParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'unknown queue or job' }, 409: { description: 'job is active' } },
      handler: async ({ params }) => {
        await inspector.remove(params.name, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/queues/:name/retry-failed',
      tag: 'jobs',
      access: 'admin',
      summary: 'Retry every failed job of a queue (as POST /api/dead-jobs/retry {queue}).',
      params: queueParams,
      responses: { 200: { description: 'retried' }, 404: { description: 'unknown queue' } },
      handler: async ({ params }) => ({ body: await inspector.retryFailed(params.name) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/dead-jobs',
      tag: 'jobs',
      access: 'admin',
      summary:
        'The dead-job console: failed jobs of every queue (or of `queue`), newest first, whose id, name or reason contains `q`, from `offset`; compact entries (the single-job view has the stack trace) and the total of matches.',
      query: deadQuery,
      responses: { 200: { description: '{total, offset, limit, jobs}' }, 400: { description: 'unknown queue (field queue), bad offset or limit' } },
      handler: async ({ query }) => ({ body: await inspector.deadJobs(query, query.offset, query.limit) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/dead-jobs/retry',
      tag: 'jobs',
      access: 'admin',
      summary: 'Replay every dead job matching the filter (queue, q): full attempts again, chains kept.',
      body: deadRetryBody,
      responses: { 200: { description: '{retried, skipped}' }, 400: { description: 'unknown queue (field queue)' } },
      handler: async ({ body }) => ({ body: await inspector.replayDead(body) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/dead-jobs',
      tag: 'jobs',
      access: 'admin',
      summary: 'Remove every dead job matching the filter (queue and/or q required).',
      query: deadRemoveQuery,
      responses: { 200: { description: '{removed, skipped}' }, 400: { description: 'no filter, or an unknown queue (field queue)' } },
      handler: async ({ query }) => ({ body: await inspector.removeDead(query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id',
      tag: 'jobs',
      access: 'user',
      summary:
        'State and result of a task: any queue for an admin, the refreshes of your own feeds for a user. `queue` names the queue when an id BullMQ numbered itself is in several.',
      params: taskParams,
      query: taskQuery,
      responses: {
        200: { description: 'task' },
        400: { description: 'unknown queue (field queue)' },
        404: { description: 'unknown task (or not yours)' },
        409: { description: 'ambiguous_task: the id names a job in several queues; ask again with ?queue=' },
      },
      handler: async ({ params, query, auth }) => {
        const admin = auth!.role === 'admin';
        const visible = admin
          ? undefined
          : (queue: string, job: { data: { feedId?: unknown } }) =>
              queue === queues.feedRefresh.name && typeof job.data?.feedId === 'number' && ownsFeed(auth!.userId, job.data.feedId);
        return { body: await inspector.task(params.task_id, visible, query.queue) };
      },
    }),
  ];
}
