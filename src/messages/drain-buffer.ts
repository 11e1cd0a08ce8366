/**
 * One drain of one persist buffer: claim the head batch, write it to the DB in one set-based,
 * idempotent INSERT, remove it from the buffer; again until the buffer is empty, another drain
 * holds it, or the time budget is spent (the caller then queues a follow-up drain).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { MessageStore } from './message-store.js';
import type { PersistBuffer } from './persist-buffer.js';
import { toError } from '../errors.js';

export interface DrainDeps {
  redis: RedisClient;
  buffer: PersistBuffer;
  store: MessageStore;
  logger: Logger;
  /** Called with the number of entries set aside as refused (wp_messages_refused_total). */
  onRefused?: (entries: number) => void;
}

export interface DrainOutcome {
  /** Entries taken off the buffer (written, or set aside as refused). */
  drained: number;
  /** Rows the INSERTs added (fewer when some were stored already). */
  inserted: number;
  /** Another drain holds the buffer (it drains until the buffer is empty). */
  busy: boolean;
  /** The time budget ran out with entries left. */
  more: boolean;
}

/** The database refuses the data itself (SQLSTATE class 22 data exception, 23 integrity), so retrying cannot help. */
function isRefusedData(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * One INSERT for the batch. When the database refuses the data, the entries are written one by
 * one, so a single bad entry cannot hold its buffer up; those refused on their own go to
 * `refused`. Any other failure (unreachable, timeout) is thrown: the batch stays for a retry.
 */
async function insertBatch(deps: DrainDeps, entries: string[], refused: { entry: string; error: string }[]): Promise<number> {
  try {
    return await deps.store.insertEntries(entries);
  } catch (err) {
    if (!isRefusedData(err)) throw err;
    if (entries.length === 1) {
      refused.push({ entry: entries[0]!, error: toError(err).message });
      return 0;
    }
  }
  let inserted = 0;
  for (const entry of entries) inserted += await insertBatch(deps, [entry], refused);
  return inserted;
}

/** `onBatch` is called after each batch written (progress). */
export async function drainBuffer(deps: DrainDeps, shard: number, budgetMs: number, onBatch?: (outcome: DrainOutcome) => Promise<void>): Promise<DrainOutcome> {
  const token = randomUUID();
  const deadline = Date.now() + budgetMs;
  const outcome: DrainOutcome = { drained: 0, inserted: 0, busy: false, more: false };
  try {
    for (;;) {
      const batch = await deps.buffer.claim(deps.redis, shard, token);
      if (batch === null) return { ...outcome, busy: true };
      if (batch.length === 0) return outcome;
      const refused: { entry: string; error: string }[] = [];
      outcome.inserted += await insertBatch(deps, batch, refused);
      if (refused.length) {
        deps.logger.error(
          { shard, refused: refused.length, first: refused[0]!.error },
          'persist buffer entries refused; set aside in the refused list (GET /api/messages/refused)',
        );
        await deps.buffer.setAside(deps.redis, shard, refused);
        deps.onRefused?.(refused.length);
      }
      if (!(await deps.buffer.remove(deps.redis, shard, token, batch.length))) return { ...outcome, busy: true };
      outcome.drained += batch.length;
      await onBatch?.(outcome);
      if (Date.now() >= deadline) return { ...outcome, more: true };
    }
  } finally {
    await deps.buffer.release(deps.redis, shard, token).catch(() => undefined);
  }
}
