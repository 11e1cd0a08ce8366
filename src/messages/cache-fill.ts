/**
 * The background refill of a session's list after a read missed it (reference 3.2: read the DB,
 * refill Redis asynchronously). The snapshot read for the answer is merged into the list, so a
 * message appended in the meantime, and not yet in the DB, stays. One fill per session at a time
 * and at most MAX_FILLS at once per process; a fill skipped here happens on the next miss.
 */
import type { Counter } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import type { MessageView } from './message-entry.js';
import type { MessageCache } from './message-cache.js';

const MAX_FILLS = 32;

export class CacheFill {
  private readonly inFlight = new Set<string>();

  constructor(private readonly deps: { cache: MessageCache; logger: Logger; filled: Counter<'outcome'> }) {}

  /** Starts a fill unless one runs for the session already (or too many run); never throws. */
  schedule(sessionId: string, snapshot: MessageView[], complete: boolean): void {
    if (this.inFlight.has(sessionId) || this.inFlight.size >= MAX_FILLS) return;
    this.inFlight.add(sessionId);
    this.deps.cache
      .merge(sessionId, snapshot, complete, 'fill')
      .then((n) => this.deps.filled.inc({ outcome: n === -2 ? 'not_needed' : 'filled' }))
      .catch((err: Error) => {
        this.deps.filled.inc({ outcome: 'failed' });
        this.deps.logger.debug({ sessionId, err: err.message }, 'cache fill failed');
      })
      .finally(() => this.inFlight.delete(sessionId));
  }

  /** Fills running now. */
  get running(): number {
    return this.inFlight.size;
  }
}
