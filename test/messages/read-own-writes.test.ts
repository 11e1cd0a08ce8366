/**
 * A client reads back every message the API acknowledged, at once, also for a session whose list
 * the API is repairing (a cache write of it failed): the messages appended since, still waiting in
 * the persist buffer, and a message whose own cache write failed but that went to the buffer.
 * Before, such a session was read from the database alone until its repair, and those messages
 * were missing until their drain (after a Redis outage: the drain jobs' outage backoff, up to 30 s).
 *
 * And a read that needs more messages than the list holds, when more than the list holds wait in
 * the buffer (after a database outage): the DB has none of the older ones and the list no longer
 * has them. Before, it answered the list and the DB's rows with the rest left out; now it waits a
 * moment for the drains and answers 503 (retry) until they caught up, then every message.
 *
 * The API runs alone (no `messages` role): nothing drains the buffers, so a message there is in
 * the buffer and the list only. The repair interval is long, so no repair runs during the test.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { TEST_ADMIN } from '../support/env.js';
import { waitFor } from '../support/wait.js';

interface Message {
  id: string;
  seq: number;
  content: string;
}

describe('reading back what was just appended, while the session awaits its cache repair', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { AUTH_FAIL_OPEN: 'true', MESSAGE_CACHE_REPAIR_INTERVAL_MS: '600000' } });
  });
  afterAll(() => t?.stop());

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
  const stored = async (session: string) =>
    (await t.platform.ctx.db.pool.query<{ message_id: string }>('SELECT message_id FROM chat_messages WHERE session_id = $1', [session])).rows.map(
      (r) => r.message_id,
    );

  it('after a Redis outage: the messages appended before, during and after it', async () => {
    const session = `s-${randomUUID()}`;
    const before = await post(session, 'before');
    await t.redis.stop();
    const during = await post(session, 'during'); // straight to the DB; the session awaits its repair
    t.redis = await t.redis.restart();
    const after = [await post(session, 'after 1'), await post(session, 'after 2')];

    // `during` is in the DB; `before` waits in the buffer (so may the others, unless they too found
    // the connection still reconnecting and went to the DB).
    expect(await stored(session)).toContain(during.id);
    expect(await stored(session)).not.toContain(before.id);
    // Once the API's connections are back (`before` is in Redis only), and without a repair:
    // before, the session was read from the DB alone until its repair.
    const whole = await waitFor(async () => ((await read(session)).messages.length === 4 ? read(session) : undefined), {
      timeoutMs: 20_000,
      message: 'every message read back',
    });
    expect(whole).toEqual({ source: 'db', messages: [before, during, ...after] });
  });

  it('a message whose cache write was refused but that went to the buffer', async () => {
    const session = `s-${randomUUID()}`;
    const first = await post(session, 'first');
    // The credential's state is gone from Redis (expired, or a Redis that lost it): the cache write
    // is refused for it, the buffer push makes the full check, which restores it, and goes through.
    const { rows } = await t.platform.ctx.db.pool.query<{ id: number }>('SELECT id FROM users WHERE username = $1', [TEST_ADMIN.username]);
    await t.platform.ctx.redis.del(t.platform.ctx.keys.userCredential(rows[0]!.id));
    const second = await post(session, 'second');

    expect(await stored(session)).toEqual([]);
    expect(await read(session)).toEqual({ source: 'db', messages: [first, second] });
  });
});

describe('a read that needs messages trimmed off the list before they were stored', () => {
  let t: TestPlatform;
  let worker: PlatformHandle | undefined;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { MESSAGE_CACHE_MAX_LEN: '5' } });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.stop();
  });

  it('answers 503 until the drains caught up, then every message: never one with a hole', async () => {
    const session = `s-${randomUUID()}`;
    const sent: Message[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await t.api.post<Message>(`/api/sessions/${session}/messages`, { role: 'user', content: `m${i}` });
      expect(res.status).toBe(201);
      sent.push(res.body);
    }
    // The list holds the newest 5: a read of 5 is the cache's; one of 8 needs the 3 nobody stored yet.
    expect((await t.api.get(`/api/sessions/${session}/messages?limit=5`)).body).toEqual({ source: 'cache', messages: sent.slice(3) });
    const early = await t.api.get(`/api/sessions/${session}/messages?limit=8`);
    expect(early.status, JSON.stringify(early.body)).toBe(503);
    expect(early.body.error.code).toBe('database_unavailable');
    expect(early.headers.get('retry-after')).toBeTruthy();

    worker = await startPlatform({ roles: ['messages'], config: loadConfig(t.env) });
    const all = await waitFor(
      async () => {
        const res = await t.api.get(`/api/sessions/${session}/messages?limit=8`);
        return res.status === 200 ? res.body : undefined;
      },
      { timeoutMs: 30_000, message: 'the read once the drains caught up' },
    );
    expect(all).toEqual({ source: 'db', messages: sent });
  });
});
