/**
 * The persist worker's job processor (write-behind, the reference's Kafka consumer).
 *
 * The worker holds up to MESSAGE_PERSIST_CONCURRENCY jobs at once; their messages go through one
 * group commit, so the messages of many jobs are written by one set-based INSERT of at most
 * MESSAGE_PERSIST_BATCH rows (MESSAGE_PERSIST_PARALLEL statements at a time). A job completes
 * once all its messages are committed. Inserts are idempotent by message id, so a job delivered
 * twice, retried after a partial failure, or carrying messages the API already wrote directly
 * stores each message once.
 *
 * A database that cannot be reached delays the job (BlockedError: no attempt is spent), so an
 * outage of any length loses nothing; any other failure is retried with the queue's backoff.
 */
import { BlockedError, PermanentError } from '../errors.js';
import type { JobProcessor } from '../queues/create-worker.js';
import { messagePersistPayload, type AcceptedMessage } from '../queues/payloads/messages.js';
import type { GroupCommit } from './group-commit.js';
import { isDatabaseUnavailable } from './message-store.js';

export const DB_DOWN_RETRY_MS = 2000;

export function persistProcessor(writes: GroupCommit<AcceptedMessage>): JobProcessor<'messagePersist', { messages: number }> {
  return async (job) => {
    const parsed = messagePersistPayload.safeParse(job.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new PermanentError(`invalid persist payload: ${issue.path.join('.')}: ${issue.message}`, 'invalid_payload');
    }
    try {
      await writes.submit(parsed.data.messages);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw new BlockedError(`database unavailable: ${(err as Error).message}`, DB_DOWN_RETRY_MS, 'database_unavailable');
      throw err;
    }
    return { messages: parsed.data.messages.length };
  };
}
