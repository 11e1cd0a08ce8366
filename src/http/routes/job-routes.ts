import { z } from 'zod';
import { JOB_STATES, type JobInspector } from '../../queues/job-inspector.js';
import { defineRoute, type AnyRoute } from '../route.js';

const queueParams = z.object({ name: z.string().min(1) });
const jobParams = z.object({ name: z.string().min(1), id: z.string().min(1) });
const listQuery = z.object({
  state: z.enum(JOB_STATES).default('failed'),
  start: z.coerce.number().int().min(0).default(0),
  end: z.coerce.number().int().min(0).default(49),
}).refine((q) => q.end >= q.start, { message: 'end must not be before start', path: ['end'] })
  .refine((q) => q.end - q.start < 1000, { message: 'at most 1000 jobs per page', path: ['end'] });
const deadQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });
const taskParams = z.object({ task_id: z.string().min(1).max(256) });

export function jobRoutes(inspector: JobInspector): AnyRoute[] {
  return [
    defineRoute({
      method: 'get', path: '/api/queues', tag: 'jobs', summary: 'Every queue with its job counts by state.',
      responses: { 200: { description: 'queues' } },
      handler: async () => ({ body: { queues: await inspector.counts() } }),
    }),
    defineRoute({
      method: 'get', path: '/api/queues/:name/jobs', tag: 'jobs', summary: 'Jobs of one queue in one state, by index range.',
      params: queueParams, query: listQuery,
      responses: { 200: { description: 'jobs' }, 404: { description: 'unknown queue' } },
      handler: async ({ params, query }) => ({ body: await inspector.list(params.name, query.state, query.start, query.end) }),
    }),
    defineRoute({
      method: 'get', path: '/api/queues/:name/jobs/:id', tag: 'jobs', summary: 'One job with its state, data, result or failure.',
      params: jobParams,
      responses: { 200: { description: 'job' }, 404: { description: 'unknown queue or job' } },
      handler: async ({ params }) => ({ body: await inspector.get(params.name, params.id) }),
    }),
    defineRoute({
      method: 'post', path: '/api/queues/:name/jobs/:id/retry', tag: 'jobs', summary: 'Retry a failed (or completed) job.',
      params: jobParams,
      responses: { 200: { description: 'job queued again' }, 404: { description: 'unknown queue or job' }, 409: { description: 'job not failed or completed' } },
      handler: async ({ params }) => ({ body: await inspector.retry(params.name, params.id) }),
    }),
    defineRoute({
      method: 'delete', path: '/api/queues/:name/jobs/:id', tag: 'jobs', summary: 'Delete a job (not while it runs).',
      params: jobParams,
      responses: { 204: { description: 'deleted' }, 404: { description: 'unknown queue or job' }, 409: { description: 'job is active' } },
      handler: async ({ params }) => {
        await inspector.remove(params.name, params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post', path: '/api/queues/:name/retry-failed', tag: 'jobs', summary: 'Retry every failed job of a queue.',
      params: queueParams,
      responses: { 200: { description: 'retried' }, 404: { description: 'unknown queue' } },
      handler: async ({ params }) => ({ body: await inspector.retryFailed(params.name) }),
    }),
    defineRoute({
      method: 'get', path: '/api/dead-jobs', tag: 'jobs', summary: 'Failed jobs of every queue, newest first, with reason, stack, attempts and data.',
      query: deadQuery,
      responses: { 200: { description: 'dead jobs' } },
      handler: async ({ query }) => ({ body: await inspector.deadJobs(query.limit) }),
    }),
    defineRoute({
      method: 'get', path: '/api/tasks/:task_id', tag: 'jobs', summary: 'State and result of a task (any queue).',
      params: taskParams,
      responses: { 200: { description: 'task' }, 404: { description: 'unknown task' } },
      handler: async ({ params }) => ({ body: await inspector.task(params.task_id) }),
    }),
  ];
}
