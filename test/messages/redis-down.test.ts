/**
 * Invariant 7 for the message cache: with Redis down the API writes accepted messages straight
 * to the DB and reads from the DB; when Redis returns, the messages queued before the outage are
 * persisted, the session's list is merged with what was written meanwhile, and every accepted
 * message is there once, in the order it was accepted, in the DB and in the cache.
 *
 * The API runs alone at first (no persist worker), so the messages accepted before the outage are
 * still only in the queue and the list when Redis stops; the worker starts after Redis returns.
 * Auth must fail open for the API to take requests while Redis is down (AUTH_FAIL_OPEN=true).
 * Two platforms share the database, so it is PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

interface Message {
  id: string;
  seq: number;
  content: string;
}

describe('message cache when Redis is down', () => {
  let db: TestDatabase;
  let t: TestPlatform;
  let worker: PlatformHandle | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await startTestPlatform({ roles: ['api'], db, env: { AUTH_FAIL_OPEN: 'true', MESSAGE_CACHE_REPAIR_INTERVAL_MS: '200' } });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.stop();
    await db?.drop();
  });

  const rows = async (session: string) =>
    (
      await t.platform.ctx.db.pool.query<{ message_id: string; content: string }>(
        'SELECT message_id, content FROM chat_messages WHERE session_id = $1 ORDER BY seq',
        [session],
      )
    ).rows;
  const post = async (session: string, content: string) => {
    const res = await t.api.post<Message>(`/api/sessions/${session}/messages`, { role: 'user', content });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const read = async (session: string) => {
    const res = await t.api.get<{ messages: Message[]; source: string }>(`/api/sessions/${session}/messages?limit=100`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('accepts and serves messages from the DB while Redis is down, and loses or doubles none when it returns', async () => {
    const session = `s-${randomUUID()}`;
    const before = [await post(session, 'before 1'), await post(session, 'before 2'), await post(session, 'before 3')];
    expect(await rows(session)).toEqual([]); // queued: no persist worker yet

    await t.redis.stop();
    const during = [await post(session, 'during 1'), await post(session, 'during 2'), await post(session, 'during 3')];
    expect(await rows(session)).toHaveLength(3); // written straight to the DB
    const outageRead = await read(session);
    expect(outageRead.source).toBe('db');
    expect(outageRead.messages).toEqual(during);

    t.redis = await t.redis.restart();
    worker = await startPlatform({ roles: ['messages'], config: loadConfig(t.env) });
    const after = [await post(session, 'after 1'), await post(session, 'after 2')];
    const all = [...before, ...during, ...after];
    for (let i = 1; i < all.length; i++) expect(all[i]!.seq).toBeGreaterThan(all[i - 1]!.seq);

    await waitFor(async () => (await rows(session)).length >= all.length, { timeoutMs: 30_000, message: 'queued messages not persisted after Redis returned' });
    const stored = await rows(session);
    expect(stored.map((r) => r.message_id)).toEqual(all.map((m) => m.id));
    expect(stored.map((r) => r.content)).toEqual(all.map((m) => m.content));

    // No read has touched the list since Redis returned: the cache repair alone merged the messages
    // written to the DB during the outage between the ones queued before and the ones after.
    const cachedIds = async () =>
      (await t.platform.ctx.redis.lrange(t.platform.ctx.keys.sessionMessages(session), 0, -1))
        .filter((e) => e.startsWith('{'))
        .map((e) => (JSON.parse(e) as Message).id);
    await waitFor(async () => (await cachedIds()).length === all.length, { timeoutMs: 30_000, message: 'list not repaired after Redis returned' });
    expect(await cachedIds()).toEqual(all.map((m) => m.id));
    expect(await read(session)).toEqual({ source: 'cache', messages: all });
  });
});
