/**
 * The persist buffers and their drain, against a real Redis and database (no worker running):
 * - the lease: one drain at a time per buffer; a drain that lost its lease does not remove what
 *   the new holder is writing; a claim of an empty buffer drops the lease;
 * - a drain writes the buffer in batches of MESSAGE_PERSIST_BATCH and empties it;
 * - an entry the database refuses is set aside in the dead list without holding the others up.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drainBuffer } from '../../src/messages/drain-buffer.js';
import { MessageStore } from '../../src/messages/message-store.js';
import { PersistBuffer } from '../../src/messages/persist-buffer.js';
import type { AcceptedMessage } from '../../src/queues/declarations/messages.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('persist buffers', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: [] });
  });
  afterAll(() => t?.stop());

  const message = (session: string, n: number): AcceptedMessage => ({
    messageId: randomUUID(),
    sessionId: session,
    seq: 1_800_000_000_000_000 + n,
    role: 'assistant',
    content: `message ${n}`,
    acceptedAt: new Date().toISOString(),
  });
  const push = (shard: number, entries: string[]) => t.platform.ctx.redis.rpush(t.platform.ctx.keys.messagePersistBuffer(shard), ...entries);
  const count = async (session: string) =>
    Number((await t.platform.ctx.db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM chat_messages WHERE session_id = $1', [session])).rows[0]!.n);

  it('lets one drain hold a buffer at a time, and a drain that lost its lease removes nothing', async () => {
    const { redis, keys } = t.platform.ctx;
    const buffer = new PersistBuffer(keys, { persistShards: 4, persistBatch: 2, persistLockMs: 30_000 });
    const shard = 0;
    await push(shard, ['e1', 'e2', 'e3']);

    expect(await buffer.claim(redis, shard, 'A')).toEqual(['e1', 'e2']);
    expect(await buffer.claim(redis, shard, 'B')).toBeNull();
    expect(await buffer.remove(redis, shard, 'B', 2)).toBe(false);

    // A's lease runs out (A is slow or dead); B takes the same batch.
    await redis.pexpire(keys.messagePersistLock(shard), 1);
    await waitFor(async () => (await redis.exists(keys.messagePersistLock(shard))) === 0, { message: 'lease did not expire' });
    expect(await buffer.claim(redis, shard, 'B')).toEqual(['e1', 'e2']);
    expect(await buffer.remove(redis, shard, 'A', 2)).toBe(false);
    expect(await redis.lrange(keys.messagePersistBuffer(shard), 0, -1)).toEqual(['e1', 'e2', 'e3']);
    expect(await buffer.remove(redis, shard, 'B', 2)).toBe(true);
    expect(await buffer.claim(redis, shard, 'B')).toEqual(['e3']);
    expect(await buffer.remove(redis, shard, 'B', 1)).toBe(true);

    // An empty claim drops the lease at once: anyone may claim next.
    expect(await buffer.claim(redis, shard, 'B')).toEqual([]);
    expect(await redis.exists(keys.messagePersistLock(shard))).toBe(0);
    expect(await buffer.claim(redis, shard, 'C')).toEqual([]);
  });

  it('drains a buffer in batches of MESSAGE_PERSIST_BATCH into the DB, each message once', async () => {
    const { ctx } = t.platform;
    const session = `s-${randomUUID()}`;
    const buffer = new PersistBuffer(ctx.keys, { persistShards: 4, persistBatch: 500, persistLockMs: 30_000 });
    const shard = buffer.shardOf(session);
    const messages = Array.from({ length: 1234 }, (_, i) => message(session, i));
    await push(
      shard,
      messages.map((m) => JSON.stringify(m)),
    );
    await push(
      shard,
      messages.slice(0, 10).map((m) => JSON.stringify(m)),
    ); // ten delivered twice

    const store = new MessageStore(ctx.db);
    const statements: number[] = [];
    const counting = { insertEntries: (entries: string[]) => (statements.push(entries.length), store.insertEntries(entries)) } as MessageStore;
    const outcome = await drainBuffer({ redis: ctx.redis, buffer, store: counting, logger: ctx.logger }, shard, 60_000);

    expect(outcome).toEqual({ drained: 1244, inserted: 1234, busy: false, more: false });
    expect(statements).toEqual([500, 500, 244]);
    expect(await count(session)).toBe(1234);
    expect(await ctx.redis.llen(ctx.keys.messagePersistBuffer(shard))).toBe(0);
    expect(await ctx.redis.exists(ctx.keys.messagePersistLock(shard))).toBe(0);
  });

  it('sets aside an entry the database refuses, and writes the others', async () => {
    const { ctx } = t.platform;
    const session = `s-${randomUUID()}`;
    const buffer = new PersistBuffer(ctx.keys, { persistShards: 4, persistBatch: 500, persistLockMs: 30_000 });
    const shard = buffer.shardOf(session);
    const yearZero = { ...message(session, 2), acceptedAt: '0000-01-01T00:00:00.000Z' }; // passes the payload schema, not a PostgreSQL date
    await push(shard, [JSON.stringify(message(session, 1)), JSON.stringify(yearZero), 'not json', JSON.stringify(message(session, 3))]);

    const outcome = await drainBuffer({ redis: ctx.redis, buffer, store: new MessageStore(ctx.db), logger: ctx.logger }, shard, 60_000);
    expect(outcome).toMatchObject({ drained: 4, inserted: 2 });
    expect(await count(session)).toBe(2);
    const dead = (await ctx.redis.lrange(ctx.keys.messagePersistDead(shard), 0, -1)).map((d) => JSON.parse(d) as { entry: string; error: string });
    expect(dead.map((d) => d.entry)).toEqual([JSON.stringify(yearZero), 'not json']);
    expect(dead[0]!.error).toMatch(/out of range/);
    expect(dead[1]!.error).toMatch(/invalid input syntax for type json/);
    expect(await ctx.redis.llen(ctx.keys.messagePersistBuffer(shard))).toBe(0);
  });
});
