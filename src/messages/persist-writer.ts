/**
 * Makes accepted messages durable for the API: the write-behind persist job, or the DB itself
 * when the queue cannot take the job.
 *
 * Messages accepted while the previous enqueue is in flight leave together as one job (group
 * commit, at most MESSAGE_PERSIST_BATCH messages and MESSAGE_PERSIST_JOB_MAX_BYTES of content), so
 * under load the queue sees a job per batch rather than per message, with no timer added at rest.
 *
 * When Redis is down the producer connection fails fast (and an enqueue that has not answered
 * within MESSAGE_REDIS_TIMEOUT_MS counts as failed): the batch is inserted straight into the DB,
 * set-based and idempotent by message id. An enqueue that timed out but landed later only
 * delivers messages the DB already holds, which the worker's ON CONFLICT DO NOTHING skips.
 */
import type { Counter } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import type { AcceptedMessage } from '../queues/payloads/messages.js';
import type { QueueRegistry } from '../queues/registry.js';
import { GroupCommit } from './group-commit.js';
import type { MessageStore } from './message-store.js';

export interface PersistWriterSettings {
  persistBatch: number;
  persistJobMaxBytes: number;
  persistParallel: number;
  redisTimeoutMs: number;
}

export type Durability = 'queued' | 'stored';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class PersistWriter {
  private readonly batches: GroupCommit<AcceptedMessage>;
  /** The durability of the messages of the flush that just ran (read by `persist` right after). */
  private readonly outcome = new WeakMap<AcceptedMessage, Durability>();
  private queueDown = false;

  constructor(
    private readonly deps: {
      queues: QueueRegistry;
      store: MessageStore;
      logger: Logger;
      settings: PersistWriterSettings;
      written: Counter<'path'>;
    },
  ) {
    const s = deps.settings;
    this.batches = new GroupCommit({
      maxItems: s.persistBatch,
      maxBytes: s.persistJobMaxBytes,
      sizeOf: (m) => Buffer.byteLength(m.content),
      parallel: s.persistParallel,
      flush: (messages) => this.flush(messages),
    });
    // Create the queue (and its connection handshake) now, while Redis is expected up.
    deps.queues.queue('messagePersist');
  }

  /** Resolves once the message is in the persist queue or in the DB; rejects when neither took it. */
  async persist(message: AcceptedMessage): Promise<Durability> {
    await this.batches.submit([message]);
    return this.outcome.get(message) ?? 'queued';
  }

  private async flush(messages: AcceptedMessage[]): Promise<void> {
    const { queues, store, logger, settings, written } = this.deps;
    try {
      const job = queues.add('messagePersist', 'persist', { messages }, { removeOnComplete: true });
      await withTimeout(job, settings.redisTimeoutMs, 'the persist queue');
      if (this.queueDown) logger.info('persist queue reachable again; messages are written behind again');
      this.queueDown = false;
      written.inc({ path: 'queue' }, messages.length);
      return;
    } catch (err) {
      if (!this.queueDown) logger.warn({ err: (err as Error).message }, 'persist queue unavailable; writing accepted messages straight to the DB');
      this.queueDown = true;
    }
    await store.insert(messages);
    for (const m of messages) this.outcome.set(m, 'stored');
    written.inc({ path: 'direct' }, messages.length);
  }
}
