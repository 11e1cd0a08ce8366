/**
 * Finding 5: a token whose user did not exist was accepted (POST /api/feeds then answered 500 on
 * a foreign key), and a password change did not end the tokens issued before. Now a token carries
 * its user's token version, which a password change (own or by an admin), a role change or
 * disabling raises; every process refuses the earlier tokens from the next request on, on the
 * hot routes (whose Redis script makes the check) as on the others.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ApiKeyStore } from '../../src/auth/api-key-store.js';
import { CredentialStates } from '../../src/auth/credential-state.js';
import { UserStore } from '../../src/auth/user-store.js';
import { startPlatform, type PlatformHandle } from '../../src/runtime/start-platform.js';
import { createUser } from '../support/accounts.js';
import { TEST_JWT_SECRET, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

async function forge(claims: { sub: string; name: string; role?: string; ver?: number }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ name: claims.name, sid: randomUUID(), role: claims.role ?? 'user', ver: claims.ver ?? 1 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer('worker-platform')
    .setAudience('worker-platform-api')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/** Every kind of route a token may reach: a plain one, a pool pop, a message append and read (the hot ones). */
async function everyRoute(client: ApiClient, session: string, content = 'a message') {
  return {
    feeds: await client.get('/api/feeds'),
    pop: await client.post('/api/pools/titles/7/pop'),
    append: await client.post(`/api/sessions/${session}/messages`, { role: 'user', content }),
    read: await client.get(`/api/sessions/${session}/messages`),
  };
}

describe('token lifecycle', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    expect((await t.api.post('/api/pools/titles/7/items', { items: Array.from({ length: 20 }, (_, i) => ({ text: `row ${i}`, batchId: 1 })) })).status).toBe(
      201,
    );
  });
  afterAll(() => t?.stop());

  it('refuses a validly signed token whose user does not exist, and writes nothing', async () => {
    const ghost = t.api.withToken(await forge({ sub: '987654', name: 'ghost' }));
    const feeds = await t.platform.ctx.db.prisma.feed.count();
    const created = await ghost.post('/api/feeds', { url: 'https://feeds.example.com/ghost.xml' });
    expect(created.status).toBe(401);
    expect(created.body.error.code).toBe('unknown_user');
    for (const res of Object.values(await everyRoute(ghost, 'ghost-session'))) expect(res.status).toBe(401);
    expect(await t.platform.ctx.db.prisma.feed.count()).toBe(feeds);
    expect(await t.platform.ctx.db.prisma.chatSession.count({ where: { sessionId: 'ghost-session' } })).toBe(0);
  });

  it('ends every earlier token of a user at once when it changes its password, on every kind of route', async () => {
    const first = await createUser(t, 'ann');
    const second = t.api.withToken(undefined);
    await second.login('ann', 'pw-ann-0123');
    // Both tokens in use on the hot routes (verified and remembered by this process).
    for (const c of [first, second]) {
      const before = await everyRoute(c, 'ann-chat');
      expect([before.feeds.status, before.pop.status, before.append.status, before.read.status]).toEqual([200, 200, 201, 200]);
    }
    const stored = await t.platform.ctx.db.prisma.chatMessage.count({ where: { sessionId: 'ann-chat' } });
    const popped = await t.platform.ctx.redis.llen(t.platform.ctx.keys.pool('titles', 7));

    expect((await first.post('/api/auth/password', { currentPassword: 'pw-ann-0123', newPassword: 'a-new-password' })).status).toBe(204);
    for (const c of [first, second]) {
      const after = await everyRoute(c, 'ann-chat', 'after the change');
      for (const [route, res] of Object.entries(after)) {
        expect(res.status, route).toBe(401);
        expect(res.body.error.code, route).toBe('token_revoked');
      }
    }
    // Nothing popped or stored for the refused requests.
    expect(await t.platform.ctx.redis.llen(t.platform.ctx.keys.pool('titles', 7))).toBe(popped);
    const cached = await t.platform.ctx.redis.lrange(t.platform.ctx.keys.sessionMessages('ann-chat'), 0, -1);
    expect(cached.join()).not.toContain('after the change');
    expect(await t.platform.ctx.db.prisma.chatMessage.count({ where: { sessionId: 'ann-chat' } })).toBe(stored);

    expect((await t.api.withToken(undefined).post('/api/auth/login', { username: 'ann', password: 'pw-ann-0123' })).status).toBe(401);
    const fresh = t.api.withToken(undefined);
    await fresh.login('ann', 'a-new-password');
    expect((await fresh.get('/api/feeds')).status).toBe(200);
  });

  it('refuses a wrong current password (400 naming it) and changes nothing', async () => {
    const bob = await createUser(t, 'bob');
    const res = await bob.post('/api/auth/password', { currentPassword: 'not-it', newPassword: 'another-password' });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('currentPassword');
    expect((await bob.get('/api/feeds')).status).toBe(200);
  });

  it('ends the tokens of a user whose password an admin resets, or whom an admin disables or demotes', async () => {
    const carol = await createUser(t, 'carol');
    const carolId = (await t.api.get('/api/users')).body.users.find((u: { username: string }) => u.username === 'carol').id;
    expect((await carol.post('/api/pools/titles/7/pop')).status).toBe(200);
    expect((await t.api.patch(`/api/users/${carolId}`, { password: 'reset-by-admin' })).status).toBe(200);
    expect((await carol.post('/api/pools/titles/7/pop')).status).toBe(401);

    await carol.login('carol', 'reset-by-admin');
    expect((await carol.post('/api/pools/titles/7/pop')).status).toBe(200);
    expect((await t.api.patch(`/api/users/${carolId}`, { disabled: true })).status).toBe(200);
    const disabled = await carol.post('/api/pools/titles/7/pop');
    expect(disabled.status).toBe(401);
    expect(disabled.body.error.code).toBe('user_disabled');
    // Her right password gets the answer a wrong one gets (it is not confirmed).
    const login = await carol.post('/api/auth/login', { username: 'carol', password: 'reset-by-admin' });
    expect(login.status).toBe(401);
    expect(login.body.error.code).toBe('invalid_credentials');

    expect((await t.api.patch(`/api/users/${carolId}`, { disabled: false, role: 'admin' })).status).toBe(200);
    await carol.login('carol', 'reset-by-admin');
    expect((await carol.get('/api/queues')).status).toBe(200);
    expect((await t.api.patch(`/api/users/${carolId}`, { role: 'user' })).status).toBe(200);
    expect((await carol.get('/api/queues')).status).toBe(401);
    await carol.login('carol', 'reset-by-admin');
    expect((await carol.get('/api/queues')).status).toBe(403);
  });

  it('keeps serving a current token when Redis lost its credential state (read again from the database)', async () => {
    const dave = await createUser(t, 'dave');
    expect((await dave.post('/api/pools/titles/7/pop')).status).toBe(200);
    const daveId = (await t.platform.ctx.db.prisma.user.findUniqueOrThrow({ where: { username: 'dave' } })).id;
    await t.platform.ctx.redis.del(t.platform.ctx.keys.userCredential(daveId));
    const res = await dave.post('/api/pools/titles/7/pop');
    expect(res.status).toBe(200);
    // The pop script found no state, the full check read it from the database and stored it again.
    expect(await t.platform.ctx.redis.get(t.platform.ctx.keys.userCredential(daveId))).toBe('1:user');
    expect((await dave.post('/api/sessions/dave-chat/messages', { role: 'user', content: 'still me' })).status).toBe(201);
  });

  it('never lets an older credential state replace a newer one (a fill that read the database just before a change)', async () => {
    const { ctx } = t.platform;
    const states = new CredentialStates({ redis: ctx.redis, keys: ctx.keys, users: new UserStore(ctx.db.prisma), apiKeys: new ApiKeyStore(ctx.db.prisma) });
    const ref = { kind: 'user' as const, id: 424242 };
    expect(await states.raise(ref, '3:user')).toBe('3:user');
    expect(await states.raise(ref, '2:admin')).toBe('3:user');
    expect(await states.raise(ref, '3:disabled')).toBe('3:user');
    expect(await states.raise(ref, '4:disabled')).toBe('4:disabled');
    expect(await states.raise(ref, '5:admin')).toBe('5:admin');
    // A state of an earlier release (the version alone) takes the same version with its role, once.
    await ctx.redis.set(ctx.keys.userCredential(424242), '6');
    expect(await states.cached(ref)).toBeUndefined();
    expect(await states.raise(ref, '6:user')).toBe('6:user');
    expect(await states.raise(ref, '6:admin')).toBe('6:user');
    // A missing user's state expires; a real one does not.
    expect(await ctx.redis.ttl(ctx.keys.userCredential(424242))).toBe(-1);
    expect(await states.fill({ kind: 'user', id: 31337 })).toBe('0:missing');
    expect(await ctx.redis.ttl(ctx.keys.userCredential(31337))).toBeGreaterThan(0);
  });

  it("refuses the last enabled admin's disabling or demotion (409)", async () => {
    const adminId = (await t.platform.ctx.db.prisma.user.findUniqueOrThrow({ where: { username: 'admin' } })).id;
    const others = await t.platform.ctx.db.prisma.user.findMany({ where: { role: 'admin', disabled: false, NOT: { id: adminId } } });
    for (const o of others) expect((await t.api.patch(`/api/users/${o.id}`, { role: 'user' })).status).toBe(200);
    const res = await t.api.patch(`/api/users/${adminId}`, { disabled: true });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('last_admin');
    expect((await t.api.get('/api/queues')).status).toBe(200);
  });
});

describe('token lifecycle across API processes', () => {
  it('refuses an earlier token in another process from its next request on', async () => {
    const t = await startTestPlatform({ roles: ['api'] });
    let other: PlatformHandle | undefined;
    try {
      other = await startPlatform({ roles: ['api'], config: loadConfig(testEnv(t.redis, t.db, { DATA_DIR: `${t.env.DATA_DIR}-b` })) });
      const user = await createUser(t, 'erin');
      const there = new ApiClient(other.apiUrl!, user.token);
      expect((await there.post('/api/sessions/erin-chat/messages', { role: 'user', content: 'one' })).status).toBe(201);
      expect((await user.post('/api/auth/password', { currentPassword: 'pw-erin-0123', newPassword: 'erins-new-password' })).status).toBe(204);
      const refused = await there.post('/api/sessions/erin-chat/messages', { role: 'user', content: 'two' });
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('token_revoked');
    } finally {
      await other?.stop();
      await t.stop();
    }
  });
});
