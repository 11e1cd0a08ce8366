/**
 * The users and API keys routes (admins): users created, listed and changed without their password
 * hashes ever leaving the server; API keys shown once, stored hashed, acting as their user with
 * their role on every kind of route (the hot ones too), and refused everywhere the moment they are
 * revoked or their user is disabled.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/accounts.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('users and API keys', () => {
  let t: TestPlatform;
  let ann: ApiClient;
  let annId: number;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    ann = await createUser(t, 'ann');
    annId = (await t.api.get('/api/users')).body.users.find((u: { username: string }) => u.username === 'ann').id;
    expect((await t.api.post('/api/pools/titles/9/items', { items: Array.from({ length: 10 }, (_, i) => ({ text: `row ${i}`, batchId: 1 })) })).status).toBe(
      201,
    );
  });
  afterAll(() => t?.stop());

  it('creates, lists and changes users, never showing a password hash', async () => {
    const created = await t.api.post('/api/users', { username: 'bob', password: 'bobs-password' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: 'bob', role: 'user', disabled: false });
    expect(JSON.stringify(created.body)).not.toMatch(/password|\$2[aby]\$/);
    expect((await t.api.post('/api/users', { username: 'bob', password: 'another-one' })).body.error).toMatchObject({
      code: 'username_taken',
      field: 'username',
    });
    const listed = await t.api.get('/api/users');
    expect(listed.body.users.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(['admin', 'ann', 'bob']));
    expect(JSON.stringify(listed.body)).not.toMatch(/\$2[aby]\$/);
    expect((await t.api.patch(`/api/users/${created.body.id}`, { role: 'admin' })).body.role).toBe('admin');
    expect((await t.api.patch('/api/users/999999', { disabled: true })).status).toBe(404);
    for (const [body, field] of [
      [{ username: 'carl', password: 'short' }, 'password'],
      [{ username: 'carl', password: 'é'.repeat(40) }, 'password'], // 80 bytes: past bcrypt's 72
      [{ username: 'has space', password: 'long-enough' }, 'username'],
      [{ username: 'carl', password: 'long-enough', role: 'root' }, 'role'],
      [{ username: 'carl', password: 'change-me' }, 'password'], // the example password (8+ characters, yet refused)
    ] as const) {
      const res = await t.api.post('/api/users', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.field, JSON.stringify(body)).toBe(field);
    }
    expect((await t.api.patch(`/api/users/${annId}`, {})).status).toBe(400);
  });

  it('shows a key once, stores its hash only, and lets it act as its user with its role on every kind of route', async () => {
    const created = await t.api.post('/api/api-keys', { name: "ann's reader", userId: annId });
    expect(created.status).toBe(201);
    const { key, id } = created.body as { key: string; id: number };
    expect(key).toMatch(/^wpk_\d+_[A-Za-z0-9_-]{43}$/);
    const row = await t.platform.ctx.db.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row.secretHash).toBe(createHash('sha256').update(key.split('_').slice(2).join('_')).digest('hex'));
    expect(JSON.stringify((await t.api.get('/api/api-keys')).body)).not.toContain(key.slice(-43));

    const program = t.api.withToken(key);
    for (let i = 0; i < 2; i++) expect((await program.post('/api/pools/titles/9/pop')).status).toBe(200);
    expect((await program.post('/api/sessions/ann-program/messages', { role: 'assistant', content: 'from a key' })).status).toBe(201);
    // The session is ann's: ann reads it with her token.
    expect((await ann.get('/api/sessions/ann-program/messages')).body.messages).toHaveLength(1);
    expect((await program.get('/api/queues')).status).toBe(403);
    expect((await program.post('/api/auth/logout')).body.error.code).toBe('not_a_session');

    const wrong = await t.api.withToken(`${key.slice(0, -4)}AAAA`).get('/api/feeds');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_api_key');
  });

  it('refuses an admin key for a user who is no admin (400 naming role)', async () => {
    const res = await t.api.post('/api/api-keys', { name: 'too much', userId: annId, role: 'admin' });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('role');
    const admin = await t.api.post('/api/api-keys', { name: 'ops', role: 'admin' });
    expect(admin.status).toBe(201);
    expect((await t.api.withToken(admin.body.key).get('/api/queues')).status).toBe(200);
  });

  it('refuses a key at once when it is revoked, and every key of a user who is disabled', async () => {
    const one = (await t.api.post('/api/api-keys', { name: 'one', userId: annId })).body.key as string;
    const two = (await t.api.post('/api/api-keys', { name: 'two', userId: annId })).body.key as string;
    for (const k of [one, two]) expect((await t.api.withToken(k).post('/api/pools/titles/9/pop')).status).toBe(200);
    const oneId = Number(one.split('_')[1]);
    expect((await t.api.delete(`/api/api-keys/${oneId}`)).status).toBe(204);
    for (const res of [await t.api.withToken(one).post('/api/pools/titles/9/pop'), await t.api.withToken(one).get('/api/feeds')]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_api_key');
    }
    expect((await t.api.withToken(two).post('/api/pools/titles/9/pop')).status).toBe(200);
    expect((await t.api.patch(`/api/users/${annId}`, { disabled: true })).status).toBe(200);
    expect((await t.api.withToken(two).post('/api/sessions/ann-program/messages', { role: 'user', content: 'x' })).status).toBe(401);
    expect(
      (await t.api.get('/api/api-keys')).body.keys.filter((k: { userId: number; revokedAt: string | null }) => k.userId === annId && !k.revokedAt),
    ).toEqual([]);
    expect((await t.api.delete('/api/api-keys/999999')).status).toBe(404);
  });
});
