/**
 * Sessions whose cache may be missing a message: the MULTI of an accepted message failed or
 * timed out (Redis down or slow), while the message itself went to the persist queue or straight
 * to the DB. Until repaired, this process reads such a session from the DB only.
 *
 * Repair, every MESSAGE_CACHE_REPAIR_INTERVAL_MS while any session waits: once every such message
 * of a session is in the DB and Redis answers, the session's list (if it exists) is merged with
 * the DB's newest rows. Merging rather than deleting keeps messages that are still on their way
 * to the DB, which are only in the list. Other processes may serve the list without the message
 * until then; the repair bounds that to the outage plus the persist delay. This process keeps each
 * such message (its entry) until it is in the DB, and its reads add them (read-messages.ts): a
 * message whose cache write failed but that went to the persist buffer is in neither the list nor
 * the DB until its drain.
 */
import type { Counter } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import type { MessageCache } from './message-cache.js';
import type { MessageStore } from './message-store.js';
import { toError } from '../errors.js';

const SESSIONS_PER_ROUND = 500;

export class CacheRepair {
  /** sessionId → messageId → the message's entry, while it may be missing from the list. */
  private readonly waiting = new Map<string, Map<string, string>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly deps: {
      cache: MessageCache;
      store: MessageStore;
      logger: Logger;
      cacheMaxLen: number;
      intervalMs: number;
      repaired: Counter;
    },
  ) {}

  /** Remembers that the message `messageId` (its list entry: `entry`) may be missing from the session's list. */
  track(sessionId: string, messageId: string, entry: string): void {
    let messages = this.waiting.get(sessionId);
    if (!messages) this.waiting.set(sessionId, (messages = new Map()));
    messages.set(messageId, entry);
    this.schedule();
  }

  isTracked(sessionId: string): boolean {
    return this.waiting.has(sessionId);
  }

  /** The entries of the session's messages that may be missing from its list and were not seen in the DB yet. */
  unstored(sessionId: string): string[] {
    return [...(this.waiting.get(sessionId)?.values() ?? [])];
  }

  get size(): number {
    return this.waiting.size;
  }

  private schedule(): void {
    if (this.timer || this.running) return;
    this.timer = setTimeout(() => void this.round(), this.deps.intervalMs);
    this.timer.unref();
  }

  /** One repair round over up to SESSIONS_PER_ROUND sessions; reschedules while any are left. */
  async round(): Promise<void> {
    this.timer = undefined;
    if (this.running) return;
    if (this.deps.cache.closed) {
      this.waiting.clear(); // shutting down: nothing can be repaired from this process any more
      return;
    }
    this.running = true;
    try {
      const sessions = [...this.waiting.keys()].slice(0, SESSIONS_PER_ROUND);
      const stored = await this.deps.store.existing(sessions.flatMap((s) => [...this.waiting.get(s)!.keys()]));
      for (const sessionId of sessions) {
        const ids = this.waiting.get(sessionId)!;
        if (![...ids.keys()].every((id) => stored.has(id))) continue; // still on its way to the DB
        const rows = await this.deps.store.latest(sessionId, this.deps.cacheMaxLen);
        await this.deps.cache.merge(sessionId, rows, rows.length < this.deps.cacheMaxLen, 'repair');
        // Messages tracked while this session was being merged wait for the next round.
        for (const id of [...ids.keys()]) if (stored.has(id)) ids.delete(id);
        if (ids.size === 0) this.waiting.delete(sessionId);
        this.deps.repaired.inc();
      }
    } catch (err) {
      this.deps.logger.debug({ err: toError(err).message, sessions: this.waiting.size }, 'cache repair postponed');
    } finally {
      this.running = false;
      if (this.waiting.size > 0) this.schedule();
    }
  }
}
