/**
 * The read path (reference 3.2, read-through): the session's list when it can answer (source
 * "cache"); on a miss, a Redis error, or a session whose cache is being repaired, the DB
 * (source "db", with the messages the DB does not hold yet: those in the list, and those this
 * process accepted without their cache write), after which the list is refilled in the
 * background from the rows just read (not while the session is being repaired).
 *
 * Every answer moves the sequence clock past the newest message it returns, so a message written
 * after a read sorts after everything the read showed.
 *
 * A `revocation` (src/revocation/revocation.ts) is checked in the cache read itself (a read that could
 * not confirm the credential makes the full check and reads again); when the cache is not read or
 * the read failed, on its own before the DB is asked.
 *
 * The DB may be behind the list by more than the list holds: after a database outage more than
 * MESSAGE_CACHE_MAX_LEN messages of a session may wait in the persist buffer, and those trimmed
 * off the list are then in neither. A read that needs messages older than a full list whose
 * oldest entry the DB does not hold yet waits for the drains (up to CATCH_UP_MS), and answers 503
 * if they have not caught up by then: never an answer with a hole in it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Counter } from 'prom-client';
import { runGuarded } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import { DependencyDownError, UnauthenticatedError } from '../errors.js';
import type { CacheFill } from './cache-fill.js';
import type { CacheRepair } from './cache-repair.js';
import { SESSION_START, answerFromCache, entryOf, idOfEntry, seqOfEntry, type MessageView } from './message-entry.js';
import type { MessageCache } from './message-cache.js';
import type { MessageStore } from './message-store.js';
import type { SequenceClock } from './sequence-clock.js';

/** How long a read waits for the drains when the DB is behind a full list (see the header), and how often it looks. */
const CATCH_UP_MS = 1000;
const CATCH_UP_POLL_MS = 50;

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
  // A session this process is repairing: its list may lack a message whose cache write failed, so
  // the list alone never answers. It is read all the same, for the messages it holds that the DB
  // does not hold yet (appended since, waiting for their drain).
  const repairing = deps.repair.isTracked(sessionId);
  let checked = false;
  let slice: string[] = [];
  try {
    slice = await runGuarded(revocation, () => deps.cache.read(sessionId, Math.min(limit, deps.cacheMaxLen), revocation));
    checked = true;
    const hit = repairing ? undefined : answerFromCache(slice, limit);
    if (hit) {
      deps.cacheReads.inc({ outcome: 'hit' });
      const newest = hit.length ? seqOfEntry(hit[hit.length - 1]!) : undefined;
      if (newest !== undefined) deps.clock.observe(newest);
      return { source: 'cache', entries: hit };
    }
    deps.cacheReads.inc({ outcome: repairing ? 'repairing' : 'miss' });
  } catch (err) {
    if (err instanceof UnauthenticatedError) throw err;
    deps.cacheReads.inc({ outcome: 'error' });
  }
  if (!checked) await revocation?.check();

  // Read enough to refill the whole list, not only what was asked for.
  const want = Math.max(limit, deps.cacheMaxLen);
  let rows = await deps.store.latest(sessionId, want);
  for (const giveUpAt = Date.now() + CATCH_UP_MS; mayMissTrimmed(slice, rows, limit, deps.cacheMaxLen); ) {
    if (Date.now() >= giveUpAt)
      throw new DependencyDownError('database', 'the newest messages of this session are still being written to the database; try again shortly');
    await sleep(CATCH_UP_POLL_MS);
    rows = await deps.store.latest(sessionId, want);
  }
  if (!repairing) deps.fill.schedule(sessionId, rows, rows.length < want);
  // The messages this process accepted without their cache write are added too: on their way to
  // the DB, they may be in neither the list nor the DB yet.
  const entries = withUnstored(rows, [...slice, ...deps.repair.unstored(sessionId)]).slice(-limit);
  const newest = entries.length ? seqOfEntry(entries[entries.length - 1]!) : undefined;
  if (newest !== undefined) deps.clock.observe(newest);
  return { source: 'db', entries };
}

/**
 * Whether rows + list could leave out messages the answer needs: the list is full (LTRIM drops
 * its oldest entries, the session-start marker first), the answer needs more than it holds, and
 * its oldest entry is not among the DB's newest rows, so the entries trimmed off before it may be
 * stored nowhere yet.
 */
function mayMissTrimmed(slice: string[], rows: MessageView[], limit: number, cacheMaxLen: number): boolean {
  if (slice.length < cacheMaxLen || slice[0] === SESSION_START || limit <= slice.length) return false;
  const oldest = idOfEntry(slice[0]!);
  return oldest !== undefined && !rows.some((r) => r.id === oldest);
}

/**
 * The DB rows as entries, with the given entries (the cache slice, the messages awaiting repair)
 * that are not in the DB yet (accepted, waiting in the persist buffer), each once, in session
 * order: a client reads what it has just written even when the list alone could not answer (a new
 * session's list has no start marker, a session under repair may lack a message).
 */
function withUnstored(rows: MessageView[], candidates: string[]): string[] {
  const entries = rows.map(entryOf);
  const seen = new Set(rows.map((r) => r.id));
  const unstored: string[] = [];
  for (const e of candidates) {
    const id = idOfEntry(e);
    if (e === SESSION_START || id === undefined || seen.has(id)) continue;
    seen.add(id);
    unstored.push(e);
  }
  if (!unstored.length) return entries;
  const keyed = [...entries, ...unstored].map((entry) => ({ entry, seq: seqOfEntry(entry) ?? 0, id: idOfEntry(entry) ?? '' }));
  keyed.sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return keyed.map((k) => k.entry);
}
