/**
 * Bull Board's buttons, answered by the platform: an express router mounted before bull-board's
 * own (bull-board.ts), on the routes of @bull-board/api 9.10.1 (dist/routes.js) that change jobs.
 * What each button does is the table in docs/operations.md#bull-board.
 *
 * Invariants: every action goes through the same job console as the REST routes
 * (src/queues/job-inspector.ts, with the chains' replay and promote handlers) or the board's rules
 * (board-rules.ts), so no button leaves a second pending job in a chain; what the platform has no
 * rule about is passed on to bull-board unchanged. Answers keep bull-board's shapes where its UI
 * reads them; a refusal is the platform's JSON error plus `error.key` (a bull-board message key)
 * and `message`, which the board's toast shows.
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { InvalidInputError, InvalidStateError, NotFoundError, OutcomeError } from '../src/errors.js';
import { errorReply } from '../src/http/error-reply.js';
import { findTextProblem, TEXT_PROBLEM_MESSAGE } from '../src/http/input-checks.js';
import { parseOr400 } from '../src/http/route-input.js';
import { queues as definitions, type QueueKey } from '../src/queues/definitions.js';
import { findJob, type JobInspector } from '../src/queues/job-inspector.js';
import type { QueueRegistry } from '../src/queues/registry.js';
import { addOptions, addRefusal, chainRule, checkDataEdit, cleanRefusal, queueActionRefusal, removeRefusal, type QueueAction } from './board-rules.js';

export interface BoardActionsDeps {
  jobs: JobInspector;
  queues: QueueRegistry;
  /** Largest JSON body accepted (HTTP_BODY_LIMIT). */
  bodyLimit: number;
}

const addBody = z.strictObject({
  name: z.string().max(100).optional(),
  data: z.unknown(),
  options: z.record(z.string(), z.unknown()).optional(),
});
const updateDataBody = z.strictObject({ jobData: z.unknown() });

/** The board's name for the field the job console names after its REST routes (`:id`). */
const BOARD_FIELD: Record<string, string> = { id: 'jobId' };

/** The board UI's message key for a refusal (its toast's title; `message` is the description). */
function uiKey(status: number, field: string | undefined): { key: string; options?: Record<string, string> } {
  if (status === 400) return { key: 'ERRORS.INVALID_REQUEST_BODY', options: { field: field ?? '(body)' } };
  if (status === 404) return { key: field === 'jobId' ? 'ERRORS.JOB_NOT_FOUND' : 'ERRORS.QUEUE_NOT_FOUND' };
  return { key: 'ERRORS.FORBIDDEN' };
}

/** Answers a refusal (a 4xx outcome); false for anything the request wrapper answers (5xx, 429 with its Retry-After). */
function refuse(res: Response, err: unknown): boolean {
  if (!(err instanceof OutcomeError)) return false;
  const reply = errorReply(err, '');
  if (reply.status >= 500 || reply.headers) return false;
  const field = err.field === undefined ? undefined : (BOARD_FIELD[err.field] ?? err.field);
  res.status(reply.status).json({ error: { ...reply.body.error, ...(field ? { field } : {}), ...uiKey(reply.status, field) }, message: err.message });
  return true;
}

/** What a handler answers; `undefined` passes the request on to bull-board. */
type Answer = { status: number; body: unknown } | undefined;

/** An express handler around one action: outcome errors are refusals, anything else goes to the request wrapper. */
function act(handler: (req: Request<Record<string, string>>) => Promise<Answer>) {
  return async (req: Request<Record<string, string>>, res: Response, next: NextFunction) => {
    try {
      const answer = await handler(req);
      if (!answer) return next();
      res.status(answer.status).json(answer.body);
    } catch (err) {
      if (!refuse(res, err)) next(err);
    }
  };
}

/** The JSON body, refused when it holds text that could not be stored as sent. */
function body<T>(schema: z.ZodType<T>, value: unknown): T {
  const problem = findTextProblem(value);
  if (problem)
    throw new InvalidInputError('invalid_text', `${problem.path || '(body)'}: ${TEXT_PROBLEM_MESSAGE[problem.problem]}`, { field: problem.path || '(body)' });
  return parseOr400(schema, value ?? {}, 'body');
}

export function boardActions(deps: BoardActionsDeps): Router {
  const { jobs, queues } = deps;
  const router = Router();
  const json = express.json({ limit: deps.bodyLimit });

  /** A queue of the board by its name (a BullMQ queue name: `crawl`, `crawl.3-of-6`). */
  const queueOf = (name: string): { queue: Queue; key: QueueKey } => {
    const queue = queues.byName(name);
    if (!queue) throw new NotFoundError('unknown_queue', `no queue named "${name}"`, { field: 'queueName' });
    return { queue, key: queues.targetOf(queue).key };
  };
  const jobOf = async (queue: Queue, id: string): Promise<Job> => {
    const job = await findJob(queue, id);
    if (!job) throw new NotFoundError('unknown_job', `no job "${id}" in queue "${queue.name}"`, { field: 'jobId' });
    return job;
  };
  /** A queue-wide action: refused by the rules, or bull-board's. */
  const guarded = (action: QueueAction) =>
    act(async (req) => {
      const refusal = queueActionRefusal(queueOf(req.params.queueName!).key, action);
      if (refusal) throw refusal;
      return undefined;
    });

  // In bull-board's order, so that the same route wins (`retry/:status` before `:id/retry`).
  router.post(
    '/api/queues/:queueName/add',
    json,
    act(async (req) => {
      const { queue, key } = queueOf(req.params.queueName!);
      const refusal = addRefusal(key);
      if (refusal) throw refusal;
      const input = body(addBody, req.body);
      const options = addOptions(input.options ?? {}, queue.defaultJobOptions);
      const name = input.name && input.name !== '__default__' ? input.name : undefined; // the board's name for "none given"
      const view = await jobs.add(req.params.queueName!, { name, data: input.data, ...options });
      return { status: 200, body: { job: view, status: view.state } };
    }),
  );
  router.put(
    '/api/queues/:queueName/retry/:queueStatus',
    act(async (req) => {
      const { key } = queueOf(req.params.queueName!);
      const status = req.params.queueStatus!;
      if (status === 'failed') return { status: 200, body: await jobs.replayDead({ queue: req.params.queueName! }) };
      const chain = chainRule(key);
      if (status === 'completed' && chain)
        throw new InvalidStateError('chained_queue', `completed jobs of "${definitions[key].name}" are finished links of their chains: ${chain}`, {
          field: 'queueStatus',
        });
      return undefined;
    }),
  );
  router.put(
    '/api/queues/:queueName/promote',
    act(async (req) => {
      queueOf(req.params.queueName!);
      return { status: 200, body: await jobs.promoteAll(req.params.queueName!) };
    }),
  );
  router.put(
    '/api/queues/:queueName/clean/:queueStatus',
    act(async (req) => {
      const refusal = cleanRefusal(queueOf(req.params.queueName!).key, req.params.queueStatus!);
      if (refusal) throw refusal;
      return undefined;
    }),
  );
  router.put('/api/queues/:queueName/empty', guarded('empty'));
  router.put('/api/queues/:queueName/obliterate', guarded('obliterate'));
  router.put('/api/queues/:queueName/job-schedulers/:schedulerId/remove', guarded('remove-scheduler'));
  router.patch('/api/queues/:queueName/job-schedulers/:schedulerId', guarded('update-scheduler'));
  router.put(
    '/api/queues/:queueName/:jobId/retry',
    act(async (req) => {
      const { queue } = queueOf(req.params.queueName!);
      await jobOf(queue, req.params.jobId!);
      return { status: 200, body: await jobs.retry(req.params.queueName!, req.params.jobId!) };
    }),
  );
  router.put(
    '/api/queues/:queueName/:jobId/clean',
    act(async (req) => {
      const { queue, key } = queueOf(req.params.queueName!);
      const refusal = removeRefusal(key, await (await jobOf(queue, req.params.jobId!)).getState());
      if (refusal) throw refusal;
      return undefined;
    }),
  );
  router.put(
    '/api/queues/:queueName/:jobId/promote',
    act(async (req) => {
      const { queue } = queueOf(req.params.queueName!);
      await jobOf(queue, req.params.jobId!);
      return { status: 200, body: await jobs.promote(req.params.queueName!, req.params.jobId!) };
    }),
  );
  router.patch(
    '/api/queues/:queueName/:jobId/update-data',
    json,
    act(async (req) => {
      const { queue, key } = queueOf(req.params.queueName!);
      const job = await jobOf(queue, req.params.jobId!);
      const { jobData } = body(updateDataBody, req.body);
      const parsed = definitions[key].payload.safeParse(jobData);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new InvalidInputError('invalid_payload', issue.message, { field: ['jobData', ...issue.path.map(String)].join('.') });
      }
      checkDataEdit(key, job.data, parsed.data);
      await job.updateData(parsed.data);
      return { status: 200, body: {} };
    }),
  );
  router.put('/api/queues/:queueName/:jobId/remove-unprocessed-children', guarded('remove-unprocessed-children'));
  return router;
}
