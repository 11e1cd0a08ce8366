/**
 * The chat_messages table: set-based, idempotent inserts and the reads of the read path.
 * `message_id` is unique, so writing a message again (a re-delivered persist job, a direct write
 * whose enqueue timed out but landed) stores it once. Order within a session is `seq`.
 */
import type { Database } from '../db/client.js';
import type { AcceptedMessage } from '../queues/declarations/messages.js';
import type { MessageView } from './message-entry.js';

/**
 * One statement for a batch of buffer entries (AcceptedMessage JSON), passed as ONE JSON array:
 * PostgreSQL parses it and types the columns, so the worker neither parses nor re-encodes the
 * entries. Bad data fails the statement with a class 22 or 23 error (not JSON, unknown role,
 * missing field, too long).
 */
const INSERT_ENTRIES = `
INSERT INTO chat_messages (message_id, session_id, seq, role, content, accepted_at)
SELECT "messageId", "sessionId", seq, role, content, "acceptedAt"
FROM json_to_recordset($1::json) AS m("messageId" text, "sessionId" text, seq bigint, role message_role, content text, "acceptedAt" timestamptz)
ON CONFLICT (message_id) DO NOTHING`;

export class MessageStore {
  constructor(private readonly db: Database) {}

  /** Inserts the messages of buffer entries not stored yet, in one statement; returns how many were new. */
  async insertEntries(entries: string[]): Promise<number> {
    if (entries.length === 0) return 0;
    const res = await this.db.pool.query(INSERT_ENTRIES, [`[${entries.join(',')}]`]);
    return res.rowCount ?? 0;
  }

  /** Inserts messages not stored yet, in one statement; returns how many were new. */
  insert(messages: AcceptedMessage[]): Promise<number> {
    return this.insertEntries(messages.map((m) => JSON.stringify(m)));
  }

  /** The newest `count` messages of a session, oldest first. */
  async latest(sessionId: string, count: number): Promise<MessageView[]> {
    const rows = await this.db.prisma.chatMessage.findMany({
      where: { sessionId },
      orderBy: [{ seq: 'desc' }, { messageId: 'desc' }],
      take: count,
      select: { messageId: true, seq: true, role: true, content: true, acceptedAt: true },
    });
    return rows.reverse().map((r) => ({ id: r.messageId, seq: Number(r.seq), role: r.role, content: r.content, createdAt: r.acceptedAt.toISOString() }));
  }

  /** Which of these message ids are stored. */
  async existing(messageIds: string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const res = await this.db.pool.query<{ message_id: string }>('SELECT message_id FROM chat_messages WHERE message_id = ANY($1::varchar[])', [messageIds]);
    return new Set(res.rows.map((r) => r.message_id));
  }
}
