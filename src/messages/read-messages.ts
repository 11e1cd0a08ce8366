/**
 * The read path (reference 3.2, read-through): the session's list when it can answer (source
 * "cache"); on a miss, a Redis error, or a session whose cache is being repaired, the DB
 * (source "db", with the listed messages the DB does not hold yet), after which the list is
 * refilled in the background from the rows just read.
 *
 * Every answer moves the sequence clock past the newest message it returns, so a message written
 * after a read sorts after everything the read showed.
 *
 * A `revocation` (src/revocation/revocation.ts) is checked in the cache read itself (a read that could
 * not confirm the credential makes the full check and reads again); when the cache is not read or
 * the read failed, on its own before the DB is asked.
 */
import type { Counter } from 'prom-client';
import { runGuarded } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import { UnauthenticatedError } from '../errors.js';
import type { CacheFill } from './cache-fill.js';
import type { CacheRepair } from './cache-repair.js';
import { SESSION_START, answerFromCache, entryOf, idOfEntry, seqOfEntry, type MessageView } from './message-entry.js';
import type { MessageCache } from './message-cache.js';
import type { MessageStore } from './message-store.js';
import type { SequenceClock } from './sequence-clock.js';

export interface ReadDeps {
  cache: MessageCache;
  store: MessageStore;
  fill: CacheFill;
  repair: CacheRepair;
  clock: SequenceClock;
  cacheMaxLen: number;
  cacheReads: Counter<'outcome'>;
}

export interface ReadResult {
  source: 'cache' | 'db';
  /** The newest `limit` messages, oldest first, as JSON entries. */
  entries: string[];
}

export async function readMessages(deps: ReadDeps, sessionId: string, limit: number, revocation?: Revocation): Promise<ReadResult> {
  const repairing = deps.repair.isTracked(sessionId);
  let checked = false;
  let slice: string[] = [];
  if (!repairing) {
    try {
      slice = await runGuarded(revocation, () => deps.cache.read(sessionId, Math.min(limit, deps.cacheMaxLen), revocation));
      checked = true;
      const hit = answerFromCache(slice, limit);
      if (hit) {
        deps.cacheReads.inc({ outcome: 'hit' });
        const newest = hit.length ? seqOfEntry(hit[hit.length - 1]!) : undefined;
        if (newest !== undefined) deps.clock.observe(newest);
        return { source: 'cache', entries: hit };
      }
      deps.cacheReads.inc({ outcome: 'miss' });
    } catch (err) {
      if (err instanceof UnauthenticatedError) throw err;
      deps.cacheReads.inc({ outcome: 'error' });
    }
  } else {
    deps.cacheReads.inc({ outcome: 'repairing' });
  }
  if (!checked) await revocation?.check();

  // Read enough to refill the whole list, not only what was asked for.
  const want = Math.max(limit, deps.cacheMaxLen);
  const rows = await deps.store.latest(sessionId, want);
  if (rows.length) deps.clock.observe(rows[rows.length - 1]!.seq);
  if (!repairing) deps.fill.schedule(sessionId, rows, rows.length < want);
  return { source: 'db', entries: withUnstored(rows, slice).slice(-limit) };
}

/**
 * The DB rows as entries, with the messages of the cache slice that are not in the DB yet (accepted,
 * waiting in the persist buffer), in session order: a client reads what it has just written even
 * when the list alone could not answer (a new session's list has no start marker).
 */
function withUnstored(rows: MessageView[], slice: string[]): string[] {
  const entries = rows.map(entryOf);
  const stored = new Set(rows.map((r) => r.id));
  const unstored = slice.filter((e) => e !== SESSION_START && !stored.has(idOfEntry(e) ?? ''));
  if (!unstored.length) return entries;
  const keyed = [...entries, ...unstored].map((entry) => ({ entry, seq: seqOfEntry(entry) ?? 0, id: idOfEntry(entry) ?? '' }));
  keyed.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return keyed.map((k) => k.entry);
}
