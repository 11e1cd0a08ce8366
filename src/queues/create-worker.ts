/**
 * The one worker factory. It builds a BullMQ Worker for a registered queue with the platform's
 * concurrency, lock and stalled-job settings, a child logger per job, metrics, the mapping of
 * error classes to BullMQ outcomes, and an idempotent graceful close. With queue partitions
 * (src/queues/layout.ts) it runs one BullMQ Worker per partition the process consumes, sharing the
 * concurrency out among them; jobs are counted under the registered queue's name.
 *
 * Error mapping (see src/errors.ts):
 *   PermanentError → UnrecoverableError (fails now, no retry)
 *   BlockedError   → the job is moved to delayed for retryAfterMs; no attempt is spent (counted in
 *                    wp_jobs_delayed_total, not as a failure)
 *   an outage      → Redis or the database down (src/lib/dependency-down.ts: connection lost, a
 *                    command timed out, the server shutting down, ...): delayed like a BlockedError,
 *                    by a backoff (outage-backoff.ts), no attempt spent, never a dead job; counted
 *                    as wp_jobs_delayed_total{reason="outage"}, logged at warn once per job with the
 *                    dependency named. A domain that classed its failure (a PlatformError) is taken
 *                    at its word: only unclassed errors are examined.
 *   anything else  → failure; BullMQ retries with backoff until the attempts run out
 *
 * Handing a job back (BlockedError, outage) needs Redis, which may be the dependency that is
 * down. The move waits for Redis up to the lock duration; past that (or when the job's lock was
 * lost meanwhile) the job is left where it is and BullMQ is told to leave it alone (DelayedError):
 * its lock expires and the stalled-job check hands it back. Either way the job runs again with its
 * attempts untouched. A job handed back as stalled counts against WORKER_MAX_STALLED_COUNT
 * (BullMQ's maxStalledCount, counted over the job's life), set above BullMQ's 1 so that a job rides
 * out a few Redis freezes or failovers; a job stalled more often than that fails.
 *
 * Whatever the domain promises a re-run (one pending crawl per IP, one pending refresh per feed,
 * each result processed once) holds here as it does for a retry: the job is the same job, with the
 * same id, run again.
 *
 * The worker's own errors are logged by what they mean (worker-error-log.ts): a lock that cannot
 * be renewed during a stop or for a job handed back is expected (debug); a lock lost otherwise is
 * a warn, once per job; only the unforeseen is an error.
 *
 * Fleet view: every Worker is named `<role>@<instance id>` (workerName); BullMQ names the worker's
 * blocking connection after it, so Bull Board's Workers panel of a queue lists the processes
 * serving it, and records it as each job's processedBy. BullMQ's worker metrics are on (jobs
 * completed and failed per minute, kept two weeks): Bull Board's throughput graphs.
 *
 * Shutdown: stop taking jobs, let active ones finish within the grace period, then close the
 * connections. A job still running after the grace period keeps its lock only until the lock
 * expires; the stalled-job check of any other worker then hands it out again, so nothing is lost.
 */
import os from 'node:os';
import { DelayedError, MetricsTime, UnrecoverableError, Worker, type Job, type Telemetry, type WorkerOptions } from 'bullmq';
import type { Config } from '../config/index.js';
import { BlockedError, PermanentError, toError } from '../errors.js';
import { dependencyDown } from '../lib/dependency-down.js';
import { settlesWithin } from '../lib/timeout.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnections } from '../redis/connections.js';
import type { Keys } from '../redis/keys.js';
import { queues, type PayloadOf, type QueueKey } from './definitions.js';
import { QueueLayout, type QueueTarget } from './layout.js';
import { OutageBackoff } from './outage-backoff.js';
import { inHandedOverTrace } from './trace-handover.js';
import { lockGoneJobId, WorkerErrorLog } from './worker-error-log.js';

export interface WorkerDeps {
  config: Pick<Config, 'queues'>;
  connections: RedisConnections;
  keys: Keys;
  metrics: Metrics;
  logger: Logger;
  /** The queue layout (QUEUE_SHARDS); default: one partition on a single Redis. */
  queues?: { layout: QueueLayout };
  /** This process in the cluster (INSTANCE_ID); names its workers. Default: <hostname>-<pid>, as the config's. */
  instanceId?: string;
  /** With tracing on: each job's run is a span in the trace that added it (src/tracing/). */
  telemetry?: Telemetry;
}

export interface JobContext {
  /** A logger bound to this job's queue, id and attempt (created on first use). */
  readonly logger: Logger;
  /** The lock token of this attempt (needed by job.moveToDelayed and friends). */
  readonly token: string | undefined;
  /** The queue (partition) the job was taken from. */
  readonly target: QueueTarget;
}

export type JobProcessor<K extends QueueKey, R = unknown> = (job: Job<PayloadOf<K>, R>, ctx: JobContext) => Promise<R>;

export interface WorkerSettings {
  concurrency?: number;
  lockDurationMs?: number;
  /** BullMQ options passed through (limiter, maxStalledCount, ...). */
  bullmq?: Partial<WorkerOptions>;
  /** Start taking jobs at once (default true). */
  autorun?: boolean;
}

export interface PlatformWorker {
  /** The family's queue name (metrics and logs label jobs with it, whatever their partition). */
  readonly queueName: string;
  /** The BullMQ queues taken from: one per consumed partition. */
  readonly queueNames: string[];
  /** The first of `workers` (the only one without partitions). */
  readonly worker: Worker;
  /** One BullMQ Worker per consumed partition (current layout, then older ones being drained). */
  readonly workers: Worker[];
  /** Stops intake, waits up to the grace period for active jobs, closes. Idempotent. */
  close(): Promise<void>;
}

/**
 * The name of a process's workers of one queue: `<role>@<instance id>` (`feeds@web-1-4242`). Redis
 * refuses a connection name with spaces or anything but printable ASCII: those become `_`.
 */
export function workerName(role: string, instanceId: string): string {
  return `${role}@${instanceId}`.replace(/[^\x21-\x7e]/g, '_');
}

/** After the grace period, how long a forced close may take before the worker is left behind. */
const ABANDON_AFTER_MS = 2000;

export function createWorker<K extends QueueKey, R>(deps: WorkerDeps, key: K, processor: JobProcessor<K, R>, settings: WorkerSettings = {}): PlatformWorker {
  const def = queues[key];
  const queueName = def.name;
  const q = deps.config.queues;
  const baseLogger = deps.logger.child({ queue: queueName });
  const { jobsCompleted, jobsFailed, jobsDelayed, jobDuration } = deps.metrics;
  const completed = jobsCompleted.labels(queueName);
  const duration = jobDuration.labels(queueName);

  const lockDurationMs = settings.lockDurationMs ?? q.lockDurationMs;
  const outages = new OutageBackoff(q.backoffJitter);
  const name = workerName(def.role, deps.instanceId ?? `${os.hostname()}-${process.pid}`);
  // With tracing on: the connection that takes a promoted job's trace handover (trace-handover.ts).
  const { telemetry } = deps;
  const handoverConnection = telemetry ? deps.connections.create('producer', `trace-handover:${queueName}`) : undefined;

  /**
   * Moves the job to delayed for `delayMs` without spending an attempt, then tells BullMQ to leave
   * it alone. Should Redis not record the move within the lock duration (it is down), or the lock
   * be gone already, the job stays active without a renewed lock: the stalled-job check hands it
   * back (a late move that Redis still records does the same job, earlier).
   */
  async function handBack(job: Job, token: string | undefined, delayMs: number, reason: string, errors: WorkerErrorLog, logger: Logger): Promise<never> {
    errors.handingBack(job.id!);
    let failure: unknown;
    const moved = job.moveToDelayed(Date.now() + delayMs, token).catch((err: unknown) => {
      failure = err;
    });
    if (!(await settlesWithin(moved, lockDurationMs))) {
      logger.debug({ waitedMs: lockDurationMs }, 'Redis did not record the hand-back in time; the stalled-job check returns the job');
    } else if (failure !== undefined) {
      const message = toError(failure).message;
      if (lockGoneJobId(message) !== undefined || dependencyDown(failure))
        logger.debug({ err: message }, 'the hand-back could not be recorded (lock gone or Redis down); the stalled-job check returns the job');
      else logger.warn({ err: message }, 'the hand-back could not be recorded; the stalled-job check returns the job');
    }
    throw new DelayedError(reason);
  }

  const wrap =
    (target: QueueTarget, errors: WorkerErrorLog) =>
    async (job: Job<PayloadOf<K>, R>, token?: string): Promise<R> => {
      let logger: Logger | undefined;
      const ctx: JobContext = {
        get logger() {
          return (logger ??= baseLogger.child({ jobId: job.id, attempt: job.attemptsMade + 1, ...(target.count > 1 ? { partition: target.name } : {}) }));
        },
        token,
        target,
      };
      const outageKey = `${target.name}:${job.id}`;
      errors.started(job.id!);
      const started = performance.now();
      try {
        const result = handoverConnection
          ? await inHandedOverTrace(telemetry!, handoverConnection, deps.keys, job, name, () => processor(job, ctx))
          : await processor(job, ctx);
        duration.observe((performance.now() - started) / 1000);
        completed.inc();
        outages.forget(outageKey);
        return result;
      } catch (thrown) {
        duration.observe((performance.now() - started) / 1000);
        if (thrown instanceof DelayedError) {
          jobsDelayed.inc({ queue: queueName, reason: 'delayed' });
          throw thrown;
        }
        if (thrown instanceof BlockedError) {
          jobsDelayed.inc({ queue: queueName, reason: thrown.routine ? 'turn' : 'blocked' });
          const log = thrown.routine ? ctx.logger.debug.bind(ctx.logger) : ctx.logger.warn.bind(ctx.logger);
          log({ retryAfterMs: thrown.retryAfterMs, reason: thrown.message }, 'job blocked; delayed without spending an attempt');
          return handBack(job, token, thrown.retryAfterMs, thrown.message, errors, ctx.logger);
        }
        const err = toError(thrown);
        const down = thrown instanceof UnrecoverableError ? undefined : dependencyDown(thrown);
        if (down) {
          jobsDelayed.inc({ queue: queueName, reason: 'outage' });
          const { delayMs, first } = outages.next(outageKey);
          const log = first ? ctx.logger.warn.bind(ctx.logger) : ctx.logger.debug.bind(ctx.logger);
          log(
            { dependency: down, err: err.message, retryInMs: delayMs },
            `${down === 'redis' ? 'Redis' : 'database'} unavailable: job delayed without spending an attempt`,
          );
          return handBack(job, token, delayMs, `${down} unavailable: ${err.message}`, errors, ctx.logger);
        }
        outages.forget(outageKey);
        if (thrown instanceof UnrecoverableError) {
          jobsFailed.inc({ queue: queueName, outcome: 'dead' });
          throw thrown;
        }
        if (thrown instanceof PermanentError) {
          jobsFailed.inc({ queue: queueName, outcome: 'dead' });
          ctx.logger.warn({ err: err.message, code: thrown.code }, 'job failed permanently; no retry');
          throw new UnrecoverableError(err.message);
        }
        const attempts = job.opts.attempts ?? 1;
        const dead = job.attemptsMade + 1 >= attempts;
        jobsFailed.inc({ queue: queueName, outcome: dead ? 'dead' : 'retry' });
        ctx.logger.warn(
          { err: err.message, attemptsLeft: attempts - job.attemptsMade - 1 },
          dead ? 'job failed; attempts exhausted' : 'job failed; will retry',
        );
        throw err;
      }
    };

  // One Worker per consumed partition; the process's concurrency is shared out among the current
  // layout's partitions (at least one job each), older layouts' partitions drain at the same share.
  const layout = deps.queues?.layout ?? QueueLayout.single(deps.keys.prefix);
  const targets = layout.consumed(key);
  const currentCount = Math.max(1, targets.filter((t) => t.current).length);
  const concurrency = Math.max(1, Math.ceil((settings.concurrency ?? q.workerConcurrency) / currentCount));
  const errorLogs: WorkerErrorLog[] = [];
  const workers = targets.map((target) => {
    const errors = new WorkerErrorLog(baseLogger);
    errorLogs.push(errors);
    const worker = new Worker<PayloadOf<K>, R>(target.name, wrap(target, errors), {
      connection: deps.connections.create('bullmq', `worker:${target.name}`),
      prefix: target.prefix,
      concurrency,
      lockDuration: lockDurationMs,
      stalledInterval: q.stalledIntervalMs,
      maxStalledCount: q.maxStalledCount,
      autorun: settings.autorun ?? true,
      name,
      metrics: { maxDataPoints: MetricsTime.TWO_WEEKS },
      ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
      ...settings.bullmq,
    });
    worker.on('error', (err) => errors.log(err, target.name));
    worker.on('stalled', (jobId) => baseLogger.warn({ jobId, queue: target.name }, 'stalled job handed back to the queue'));
    return worker;
  });

  const closeOne = async (worker: Worker) => {
    if (await settlesWithin(worker.close(), q.workerShutdownGraceMs)) return;
    baseLogger.warn(
      { graceMs: q.workerShutdownGraceMs, queue: worker.name },
      'active jobs outlived the grace period, or the worker could not close; they will be retried as stalled',
    );
    // BullMQ answers a second close with the first one's promise; when that one hangs (its
    // blocking connection caught reconnecting after a Redis outage never emits 'end', BullMQ
    // #4656) the worker is left behind: its jobs go back as stalled, its sockets are closed.
    if (await settlesWithin(worker.close(true), ABANDON_AFTER_MS)) return;
    baseLogger.warn({ queue: worker.name }, 'worker did not close; left behind (its jobs will be retried as stalled)');
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (() => {
      for (const errors of errorLogs) errors.stop();
      return Promise.all(workers.map(closeOne)).then(() => undefined);
    })());

  return { queueName, queueNames: targets.map((t) => t.name), worker: workers[0]!, workers, close };
}
