/**
 * Finding 8: a message with a lone surrogate ("\ud800") was accepted with 201 and could never be
 * stored (the drain's JSON cast refused it): it sat in a dead list and was lost when the cache
 * trimmed or expired; pools stored the same text silently changed to U+FFFD. Now every text field
 * refuses lone surrogates and NUL with 400 naming the field, what is accepted is stored as sent,
 * and an accepted message the database still refuses is counted, listed for an admin and kept
 * until requeued or discarded.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PersistBuffer } from '../../src/messages/persist-buffer.js';
import { counterTotal } from '../support/accounts.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('text that cannot be stored as sent', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['messages', 'api'], env: { MESSAGE_PERSIST_SWEEP_MS: '200' } });
  });
  afterAll(() => t?.stop());

  const bufferedAnywhere = async () => {
    const { ctx } = t.platform;
    const lengths = await Promise.all(Array.from({ length: ctx.config.messages.persistShards }, (_, s) => ctx.redis.llen(ctx.keys.messagePersistBuffer(s))));
    return lengths.reduce((a, b) => a + b, 0);
  };

  it('refuses a message with a lone surrogate or NUL (400 naming content), and caches, buffers and stores nothing', async () => {
    const { ctx } = t.platform;
    for (const content of ['\\ud800', 'before \\udfff after', 'x\\u0000y']) {
      const session = `s-${randomUUID()}`;
      const res = await t.api.post(`/api/sessions/${session}/messages`, `{"role":"user","content":"${content}"}`);
      expect(res.status, content).toBe(400);
      expect(res.body.error.field, content).toBe('content');
      expect(await ctx.redis.exists(ctx.keys.sessionMessages(session))).toBe(0);
      expect(await ctx.db.prisma.chatMessage.count({ where: { sessionId: session } })).toBe(0);
    }
    expect(await bufferedAnywhere()).toBe(0);
  });

  it('refuses such text in every other text field too, naming it, and writes nothing', async () => {
    const { prisma } = t.platform.ctx.db;
    const titles = await prisma.poolTitle.count();
    const pool = await t.api.post('/api/pools/titles/3/items', '{"items":[{"text":"fine","batchId":1},{"text":"bad \\udfff","batchId":1}]}');
    expect(pool.status).toBe(400);
    expect(pool.body.error.field).toBe('items.1.text');
    expect(await prisma.poolTitle.count()).toBe(titles);
    for (const [path, body, field] of [
      ['/api/feeds', '{"url":"https://feeds.example.com/a.xml","title":"\\ud83d"}', 'title'],
      ['/api/ips', '{"name":"x\\u0000","keyword":"k"}', 'name'],
      ['/api/users', '{"username":"eve","password":"\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800"}', 'password'],
      ['/api/auth/login', '{"username":"admin\\u0000","password":"x"}', 'username'],
    ] as const) {
      const res = await t.api.post(path, body);
      expect(res.status, path).toBe(400);
      expect(res.body.error.field, path).toBe(field);
    }
    expect(await prisma.feed.count()).toBe(0);
    expect(await prisma.ip.count()).toBe(0);
  });

  it('stores what it accepts exactly as sent', async () => {
    const session = `s-${randomUUID()}`;
    const content = 'emoji 😀👩🏽‍💻, combining é, CJK 漢字, RTL שלום, \u0001 control, \uffff noncharacter';
    const res = await t.api.post(`/api/sessions/${session}/messages`, { role: 'user', content });
    expect(res.status).toBe(201);
    await waitFor(async () => (await t.platform.ctx.db.prisma.chatMessage.count({ where: { sessionId: session } })) === 1, {
      timeoutMs: 20_000,
      message: 'message not written',
    });
    const row = await t.platform.ctx.db.prisma.chatMessage.findFirstOrThrow({ where: { sessionId: session } });
    expect(row.content).toBe(content);
    const pool = await t.api.post('/api/pools/titles/4/items', { items: [{ text: content, batchId: 1 }] });
    expect(pool.status).toBe(201);
    expect((await t.platform.ctx.db.prisma.poolTitle.findFirstOrThrow({ where: { groupId: 4 } })).text).toBe(content);
  });

  it('counts, lists and keeps an accepted message the database refuses, until an admin requeues or discards it', async () => {
    const { ctx } = t.platform;
    const buffer = new PersistBuffer(ctx.keys, ctx.config.messages);
    const session = `s-${randomUUID()}`;
    const messageId = randomUUID();
    // An entry the database refuses (year 0 is no PostgreSQL date), as a drain would find it.
    const entry = JSON.stringify({ messageId, sessionId: session, seq: 1, role: 'user', content: 'refused', acceptedAt: '0000-01-01T00:00:00.000Z' });
    const refusedBefore = await counterTotal(t, 'wp_messages_refused_total');
    await ctx.redis.rpush(ctx.keys.messagePersistBuffer(buffer.shardOf(session)), entry);

    const listed = await waitFor(
      async () => {
        const res = await t.api.get('/api/messages/refused');
        return res.body.messages?.find((m: { messageId: string }) => m.messageId === messageId);
      },
      { timeoutMs: 20_000, message: 'refused message not listed' },
    );
    expect(listed).toMatchObject({ sessionId: session, entry, shard: buffer.shardOf(session) });
    expect(listed.error).toMatch(/out of range/);
    expect(await counterTotal(t, 'wp_messages_refused_total')).toBe(refusedBefore + 1);
    expect(await ctx.redis.ttl(ctx.keys.messagePersistDead(buffer.shardOf(session)))).toBe(-1);
    const metrics = await t.api.get('/metrics');
    expect(metrics.body).toMatch(/^wp_messages_refused_waiting [1-9]/m);

    // Requeued: drained again, refused again, listed again (still kept).
    const requeued = await t.api.post('/api/messages/refused/requeue');
    expect(requeued.body.requeued).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await counterTotal(t, 'wp_messages_refused_total')) === refusedBefore + 2, {
      timeoutMs: 20_000,
      message: 'requeued message not drained',
    });
    expect((await t.api.get('/api/messages/refused')).body.messages.some((m: { messageId: string }) => m.messageId === messageId)).toBe(true);

    // Discarded: gone for good.
    expect((await t.api.delete(`/api/messages/refused/${messageId}`)).status).toBe(204);
    expect((await t.api.get('/api/messages/refused')).body.messages.some((m: { messageId: string }) => m.messageId === messageId)).toBe(false);
    expect((await t.api.delete(`/api/messages/refused/${messageId}`)).status).toBe(404);
  });
});
