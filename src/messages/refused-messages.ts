/**
 * Accepted messages the database refused when their buffer was drained (drain-buffer.ts sets them
 * aside one by one, with the reason). They are never dropped by themselves: they stay in their
 * buffer's refused list (no expiry) until an admin lists them and either puts them back in their
 * buffer for another drain (after fixing what refused them) or discards one.
 *
 * Input validation refuses what is known to be unstorable before it is accepted; this is for
 * whatever still slips through (or a database that changed its mind), so that nothing accepted is
 * lost silently.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';

/** Puts every refused entry of one buffer back into the buffer, in order. */
const REQUEUE = RedisScript.load('message-refused-requeue', new URL('./message-refused-requeue.lua', import.meta.url), {
  keys: ['refused', 'buffer'],
  args: [],
});

export interface RefusedMessage {
  shard: number;
  /** The message's id, session and role when its entry can be read. */
  messageId: string | null;
  sessionId: string | null;
  error: string;
  /** The buffer entry as it was accepted (AcceptedMessage JSON). */
  entry: string;
}

function describe(shard: number, raw: string): RefusedMessage {
  let entry = raw;
  let error = '';
  try {
    const d = JSON.parse(raw) as { entry?: unknown; error?: unknown };
    if (typeof d.entry === 'string') entry = d.entry;
    if (typeof d.error === 'string') error = d.error;
  } catch {
    /* kept as it is */
  }
  let messageId: string | null = null;
  let sessionId: string | null = null;
  try {
    const m = JSON.parse(entry) as { messageId?: unknown; sessionId?: unknown };
    if (typeof m.messageId === 'string') messageId = m.messageId;
    if (typeof m.sessionId === 'string') sessionId = m.sessionId;
  } catch {
    /* an entry that is not JSON has no id */
  }
  return { shard, messageId, sessionId, error, entry };
}

export class RefusedMessages {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly shards: number,
  ) {}

  /** Up to `limit` refused messages, by shard, oldest first; `total` counts them all. */
  async list(limit: number): Promise<{ total: number; messages: RefusedMessage[] }> {
    const lengths = await Promise.all(this.shardList().map((s) => this.redis.llen(this.keys.messagePersistDead(s))));
    const messages: RefusedMessage[] = [];
    for (const s of this.shardList()) {
      if (messages.length >= limit) break;
      if (!lengths[s]) continue;
      const raw = await this.redis.lrange(this.keys.messagePersistDead(s), 0, limit - messages.length - 1);
      messages.push(...raw.map((r) => describe(s, r)));
    }
    return { total: lengths.reduce((a, b) => a + b, 0), messages };
  }

  /** Puts every refused message back into its buffer; returns the shards that got some, with how many. */
  async requeue(): Promise<{ shard: number; requeued: number }[]> {
    const out: { shard: number; requeued: number }[] = [];
    for (const s of this.shardList()) {
      const n = await REQUEUE.run<number>(this.redis, { refused: this.keys.messagePersistDead(s), buffer: this.keys.messagePersistBuffer(s) }, {});
      if (n > 0) out.push({ shard: s, requeued: n });
    }
    return out;
  }

  /** Discards the refused message with this id; false when there is none. */
  async discard(messageId: string): Promise<boolean> {
    for (const s of this.shardList()) {
      const key = this.keys.messagePersistDead(s);
      for (const raw of await this.redis.lrange(key, 0, -1)) {
        if (describe(s, raw).messageId !== messageId) continue;
        return (await this.redis.lrem(key, 1, raw)) > 0;
      }
    }
    return false;
  }

  private shardList(): number[] {
    return Array.from({ length: this.shards }, (_, s) => s);
  }
}
