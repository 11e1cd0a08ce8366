/**
 * The session message cache through the API, with the persist worker running (roles messages +
 * api, one process, PostgreSQL):
 * - 1,000 messages in one session (eight clients at once): the list holds the newest 200 with a
 *   TTL, the DB all 1,000, both in the order of acceptance (seq); a read after the key is deleted or expires comes from the DB and
 *   the next one from the cache;
 * - a list re-created by a write after its key vanished is completed from the DB, not served short;
 * - a drain job delivered twice, a drain that died after its INSERT, or a message the API also wrote
 *   directly: each message is stored once;
 * - bad input is a 400 naming the field and nothing is cached, queued or stored;
 * - a session nobody has written to reads as empty, and the read writes nothing (no list, no owner);
 * - messages accepted but not written to the DB yet are read back at once, from a new session too
 *   (its list has no start marker, so the DB answers, with the list's unstored messages).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptedMessage } from '../../src/queues/declarations/messages.js';
import { MessageStore } from '../../src/messages/message-store.js';
import { PersistBuffer } from '../../src/messages/persist-buffer.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

interface Message {
  id: string;
  seq: number;
  role: string;
  content: string;
  createdAt: string;
}

describe('session message cache', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['messages', 'api'], env: { MESSAGE_PERSIST_SWEEP_MS: '300' } });
  });
  afterAll(() => t?.stop());

  const key = (session: string) => t.platform.ctx.keys.sessionMessages(session);
  const redis = () => t.platform.ctx.redis;
  const dbRows = async (session: string) =>
    (
      await t.platform.ctx.db.pool.query<{ message_id: string; seq: string; content: string; role: string }>(
        'SELECT message_id, seq::text, content, role::text FROM chat_messages WHERE session_id = $1 ORDER BY seq',
        [session],
      )
    ).rows;
  const read = async (session: string, limit?: number) => {
    const res = await t.api.get<{ messages: Message[]; source: string }>(`/api/sessions/${session}/messages${limit ? `?limit=${limit}` : ''}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const post = async (session: string, content: string, role = 'user') => {
    const res = await t.api.post<Message>(`/api/sessions/${session}/messages`, { role, content });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };

  /** Background fills finished so far (any outcome). */
  const fills = async () =>
    (await t.platform.ctx.metrics.registry.getSingleMetric('wp_message_cache_fills_total')!.get()).values.reduce((sum, v) => sum + v.value, 0);

  it('1,000 messages: the cache holds the newest 200 with a TTL, the DB all of them in order, and reads fall back and refill', async () => {
    const session = `s-${randomUUID()}`;
    // Eight clients at once: the order of acceptance is the order of `seq`, whichever request it was.
    const answers: Message[] = [];
    let next = 0;
    let failed = false;
    const clients = await Promise.allSettled(
      Array.from({ length: 8 }, async () => {
        while (next < 1000 && !failed) {
          const i = next++;
          try {
            answers.push(await post(session, `message ${i}`, i % 2 ? 'assistant' : 'user'));
          } catch (err) {
            failed = true; // stop the other clients too
            throw err;
          }
        }
      }),
    );
    for (const c of clients) if (c.status === 'rejected') throw c.reason;
    const sent = [...answers].sort((x, y) => x.seq - y.seq);
    expect(new Set(sent.map((m) => m.seq)).size).toBe(1000);

    // The cache: the newest 200, oldest first, expiring within 24 h.
    expect(await redis().llen(key(session))).toBe(200);
    const ttl = await redis().ttl(key(session));
    expect(ttl).toBeGreaterThan(86400 - 120);
    expect(ttl).toBeLessThanOrEqual(86400);
    const cached = (await redis().lrange(key(session), 0, -1)).map((e) => JSON.parse(e) as Message);
    expect(cached).toEqual(sent.slice(-200));

    // The DB: all 1,000, once each, in the order of acceptance.
    await waitFor(async () => (await dbRows(session)).length === 1000, { timeoutMs: 60_000, message: 'not all messages persisted' });
    const rows = await dbRows(session);
    expect(rows.map((r) => r.message_id)).toEqual(sent.map((m) => m.id));
    expect(rows.map((r) => r.content)).toEqual(sent.map((m) => m.content));
    expect(rows.map((r) => Number(r.seq))).toEqual(sent.map((m) => m.seq));

    // Reads: from the cache while it holds enough; beyond what it holds, from the DB.
    const fromCache = await read(session, 200);
    expect(fromCache.source).toBe('cache');
    expect(fromCache.messages).toEqual(sent.slice(-200));
    const fillsBefore = await fills();
    const deeper = await read(session, 1000);
    expect(deeper.source).toBe('db');
    expect(deeper.messages).toEqual(sent);
    expect((await read(session)).messages).toEqual(sent.slice(-50)); // default limit 50
    // That miss started a background fill; it must land before the key is deleted below, or it
    // would re-create the list after the delete.
    await waitFor(async () => (await fills()) > fillsBefore, { message: 'the fill after the deep read did not finish' });

    // Key deleted: the next read comes from the DB and refills the list; the one after from the cache.
    await redis().del(key(session));
    const afterDelete = await read(session, 50);
    expect(afterDelete).toEqual({ source: 'db', messages: sent.slice(-50) });
    await waitFor(async () => (await read(session, 50)).source === 'cache', { message: 'list not refilled after delete' });
    expect((await read(session, 200)).messages).toEqual(sent.slice(-200));
    expect(await redis().llen(key(session))).toBe(200);
    expect(await redis().ttl(key(session))).toBeGreaterThan(86400 - 120);

    // Key expired: the same.
    await redis().pexpire(key(session), 1);
    await waitFor(async () => (await redis().exists(key(session))) === 0, { message: 'key did not expire' });
    const afterExpiry = await read(session, 10);
    expect(afterExpiry).toEqual({ source: 'db', messages: sent.slice(-10) });
    await waitFor(async () => (await read(session, 10)).source === 'cache', { message: 'list not refilled after expiry' });
    expect((await read(session, 10)).messages).toEqual(sent.slice(-10));
  });

  it('serves a short session whole from the cache once filled, and a write after the key vanished does not make it look short', async () => {
    const session = `s-${randomUUID()}`;
    const first = [await post(session, 'one'), await post(session, 'two', 'assistant'), await post(session, 'three')];
    await waitFor(async () => (await dbRows(session)).length === 3, { message: 'not persisted' });

    // Written before any read: the list is a suffix of unknown start, so a read for more than it holds asks the DB.
    expect((await read(session, 50)).source).toBe('db');
    await waitFor(async () => (await read(session, 50)).source === 'cache', { message: 'not refilled' });
    expect((await read(session, 50)).messages).toEqual(first);

    // The key vanishes, then a new message re-creates the list with only itself in it.
    await redis().del(key(session));
    const fourth = await post(session, 'four');
    expect(await redis().llen(key(session))).toBe(1);
    const served = await read(session, 50);
    expect(served.source).toBe('db'); // one cached message cannot answer a read of 50
    await waitFor(async () => (await read(session, 50)).source === 'cache', { message: 'not completed from the DB' });
    expect((await read(session, 50)).messages).toEqual([...first, fourth]);
    expect((await read(session, 1)).messages).toEqual([fourth]);
  });

  it('reads a session nobody has written to as empty, and writes nothing for it: no cache list, no owner, no fill', async () => {
    const session = `unknown-${randomUUID()}`;
    const fillsBefore = await fills();
    expect(await read(session)).toEqual({ messages: [], source: 'db' });
    expect(await read(session, 5)).toEqual({ messages: [], source: 'db' });
    expect(await redis().exists(key(session))).toBe(0);
    expect((await t.platform.ctx.db.pool.query('SELECT 1 FROM chat_sessions WHERE session_id = $1', [session])).rowCount).toBe(0);
    expect(await fills()).toBe(fillsBefore);
    // The first write still makes it the writer's, read back at once.
    await post(session, 'first');
    expect((await read(session)).messages.map((m) => m.content)).toEqual(['first']);
  });

  it('stores a message once when its drain is delivered twice, died after its INSERT, or follows a direct write', async () => {
    const { ctx } = t.platform;
    const session = `s-${randomUUID()}`;
    const buffer = new PersistBuffer(ctx.keys, ctx.config.messages);
    const shard = buffer.shardOf(session);
    const message = (n: number): AcceptedMessage => ({
      messageId: randomUUID(),
      sessionId: session,
      seq: 1_800_000_000_000_000 + n,
      role: 'user',
      content: `redelivered ${n}`,
      acceptedAt: new Date().toISOString(),
    });
    const [a, b, c] = [message(1), message(2), message(3)];
    const store = new MessageStore(ctx.db);
    // c was written straight to the DB by an API whose push timed out but landed after all;
    // a and b were written by a drain that died before it could take them off the buffer.
    await store.insert([c!]);
    await store.insert([a!, b!]);
    await ctx.redis.set(ctx.keys.messagePersistLock(shard), 'the-dead-drain', 'PX', 4000);
    await ctx.redis.rpush(ctx.keys.messagePersistBuffer(shard), ...[a, b, c].map((m) => JSON.stringify(m)));

    // The drain job delivered twice while the dead drain's lease runs: both leave the buffer to it.
    // (The shard is shared: another test's message may wait in it too, so only this session's count.)
    const buffered = async () =>
      (await ctx.redis.lrange(ctx.keys.messagePersistBuffer(shard), 0, -1)).filter((raw) => (JSON.parse(raw) as AcceptedMessage).sessionId === session).length;
    const jobs = [await ctx.queues.add('messagePersist', 'drain', { shard }), await ctx.queues.add('messagePersist', 'drain', { shard })];
    for (const job of jobs) await waitFor(async () => (await job.getState()) === 'completed', { message: `job ${job.id} not completed` });
    expect(await buffered()).toBe(3);

    // Once the lease has run out, the sweep takes the batch again; the INSERT skips what is stored.
    await waitFor(async () => (await buffered()) === 0, { message: 'buffer not drained after the lease ran out' });
    const again = await ctx.queues.add('messagePersist', 'drain', { shard });
    await waitFor(async () => (await again.getState()) === 'completed', { message: 'third drain not completed' });
    expect((await dbRows(session)).map((r) => r.content)).toEqual(['redelivered 1', 'redelivered 2', 'redelivered 3']);
  });

  it('answers bad input with a 400 naming the field, and caches, queues and stores nothing', async () => {
    const session = `s-${randomUUID()}`;
    const accepted = async () => {
      const metrics = await t.platform.ctx.metrics.registry.getSingleMetricAsString('wp_messages_accepted_total');
      return metrics
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n');
    };
    const before = await accepted();
    const cases: [string, unknown, string][] = [
      ['empty content', { role: 'user', content: '' }, 'content'],
      ['blank content', { role: 'user', content: ' \n\t ' }, 'content'],
      ['missing content', { role: 'user' }, 'content'],
      ['content not a string', { role: 'user', content: 42 }, 'content'],
      ['content over the size limit (bytes, not characters)', { role: 'user', content: 'é'.repeat(40_000) }, 'content'],
      ['content with a NUL character', { role: 'user', content: 'a\u0000b' }, 'content'],
      ['unknown role', { role: 'robot', content: 'hi' }, 'role'],
      ['missing role', { content: 'hi' }, 'role'],
      ['unknown field', { role: 'user', content: 'hi', pinned: true }, 'pinned'],
    ];
    for (const [name, body, field] of cases) {
      const res = await t.api.post(`/api/sessions/${session}/messages`, body);
      expect(res.status, name).toBe(400);
      expect(res.body.error.field, name).toBe(field);
    }
    for (const bad of ['bad%7Bid%7D', 'has.dot', 'x'.repeat(129), '%20']) {
      const post = await t.api.post(`/api/sessions/${bad}/messages`, { role: 'user', content: 'hi' });
      expect(post.status, bad).toBe(400);
      expect(post.body.error.field, bad).toBe('sessionId');
      const get = await t.api.get(`/api/sessions/${bad}/messages`);
      expect(get.status, bad).toBe(400);
      expect(get.body.error.field, bad).toBe('sessionId');
    }
    for (const limit of ['0', '1001', 'abc', '2.5']) {
      const res = await t.api.get(`/api/sessions/${session}/messages?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(res.body.error.field, limit).toBe('limit');
    }
    expect((await t.api.withToken(undefined).post(`/api/sessions/${session}/messages`, { role: 'user', content: 'hi' })).status).toBe(401);
    expect((await t.api.withToken(undefined).get(`/api/sessions/${session}/messages`)).status).toBe(401);

    expect(await redis().exists(key(session))).toBe(0);
    expect(await dbRows(session)).toEqual([]);
    expect(await accepted()).toBe(before);
    // The largest allowed content is accepted.
    const largest = await post(session, 'x'.repeat(t.platform.ctx.config.messages.maxContentBytes));
    expect(largest.content).toHaveLength(65536);
  });
});

describe('reading messages not yet written to the DB', () => {
  it('returns what was just appended to a new session, in order, before any drain ran', async () => {
    // The api role alone: nothing drains the persist buffers.
    const t = await startTestPlatform({ roles: ['api'] });
    try {
      const session = `unstored-${randomUUID()}`;
      for (const content of ['one', 'two', 'three']) {
        expect((await t.api.post(`/api/sessions/${session}/messages`, { role: 'user', content })).status).toBe(201);
      }
      const stored = await t.platform.ctx.db.pool.query('SELECT 1 FROM chat_messages WHERE session_id = $1', [session]);
      expect(stored.rowCount).toBe(0);
      const first = await t.api.get(`/api/sessions/${session}/messages?limit=10`);
      expect(first.status).toBe(200);
      expect(first.body.source).toBe('db');
      expect((first.body.messages as Message[]).map((m) => m.content)).toEqual(['one', 'two', 'three']);
      expect((await t.api.get(`/api/sessions/${session}/messages?limit=2`)).body.messages.map((m: Message) => m.content)).toEqual(['two', 'three']);
      // The background fill marked the list as the whole session: the cache answers now.
      await waitFor(async () => (await t.api.get(`/api/sessions/${session}/messages?limit=10`)).body.source === 'cache', { message: 'list not filled' });
      expect((await t.api.get(`/api/sessions/${session}/messages?limit=10`)).body.messages.map((m: Message) => m.content)).toEqual(['one', 'two', 'three']);
    } finally {
      await t.stop();
    }
  });
});
