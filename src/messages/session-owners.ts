/**
 * Who owns a session: the user whose message created it (table chat_sessions). Another user is
 * answered as if the session did not exist (404), on reads and on writes.
 *
 * An owner never changes, so each API process remembers the owners it has seen (up to
 * MAX_REMEMBERED, oldest forgotten first) and checks a known session without any I/O; only the
 * first request for a session in a process reads (or, for a write, claims) its row. Creating a
 * session therefore needs the database; writing to a known one does not.
 */
import type { Database } from '../db/client.js';
import { DependencyDownError, NotFoundError } from '../errors.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';

const MAX_REMEMBERED = 100_000;

/** Claims the session for the user unless it has an owner; answers the owner either way. */
const CLAIM = `
WITH claimed AS (
  INSERT INTO chat_sessions (session_id, user_id) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING RETURNING user_id
)
SELECT user_id FROM claimed UNION ALL SELECT user_id FROM chat_sessions WHERE session_id = $1 LIMIT 1`;

export class SessionOwners {
  private readonly owners = new Map<string, number>();

  constructor(private readonly db: Pick<Database, 'pool'>) {}

  /** Synchronously, for a session this process knows: whether `userId` owns it (undefined: unknown here). */
  ownedBy(sessionId: string, userId: number): boolean | undefined {
    const owner = this.owners.get(sessionId);
    return owner === undefined ? undefined : owner === userId;
  }

  /** Before a write: the session becomes the user's when it has no owner; 404 when another user owns it. */
  async claim(sessionId: string, userId: number): Promise<void> {
    let owner = this.owners.get(sessionId);
    if (owner === undefined) {
      owner = await this.query(CLAIM, [sessionId, userId]);
      // Another insert of the same session committed after this statement's snapshot: read it now.
      owner ??= await this.query('SELECT user_id FROM chat_sessions WHERE session_id = $1', [sessionId]);
      if (owner === undefined) throw new Error(`session ${sessionId} could be neither claimed nor read`);
      this.remember(sessionId, owner);
    }
    if (owner !== userId) throw notFound(sessionId);
  }

  /**
   * Before a read: 404 when another user owns the session. Resolves false for a session nobody
   * owns (it has no messages: it reads as empty, and the read must write nothing for it), true for
   * the caller's.
   */
  async assertReadable(sessionId: string, userId: number): Promise<boolean> {
    let owner = this.owners.get(sessionId);
    if (owner === undefined) {
      owner = await this.query('SELECT user_id FROM chat_sessions WHERE session_id = $1', [sessionId]);
      if (owner === undefined) return false;
      this.remember(sessionId, owner);
    }
    if (owner !== userId) throw notFound(sessionId);
    return true;
  }

  private async query(sql: string, values: unknown[]): Promise<number | undefined> {
    try {
      const { rows } = await this.db.pool.query<{ user_id: number }>(sql, values);
      return rows[0]?.user_id;
    } catch (err) {
      if (isDatabaseUnavailable(err))
        throw new DependencyDownError('database', "the session's owner cannot be read while the database is unavailable", { cause: err });
      throw err;
    }
  }

  private remember(sessionId: string, owner: number): void {
    if (this.owners.size >= MAX_REMEMBERED) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(sessionId, owner);
  }
}

function notFound(sessionId: string): NotFoundError {
  return new NotFoundError('session_not_found', `no session "${sessionId}" of yours`, { field: 'sessionId' });
}
