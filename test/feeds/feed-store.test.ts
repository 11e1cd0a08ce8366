/**
 * The feeds store's subscription (src/feeds/feed-store.ts) on PostgreSQL: at most `maxPerUser`
 * feeds per user however many subscriptions arrive at once, a URL once per user, and a user that
 * does not exist (deleted under its valid token) gets nothing, all without the store reading the
 * users table (the FK and an advisory lock of the feeds' own do it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { FeedStore } from '../../src/feeds/feed-store.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('FeedStore.createWithinLimit', () => {
  let testDb: TestDatabase;
  let db: Database;
  let feeds: FeedStore;
  const feed = (url: string) => ({ url, title: null, refreshIntervalMinutes: 30, nextRefreshAt: new Date() });

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = createDatabase({ url: testDb.url, poolSize: 10 });
    feeds = new FeedStore(db);
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('creates up to the limit, also for subscriptions arriving at once, and each URL once', async () => {
    const user = await db.prisma.user.create({ data: { username: 'reader', passwordHash: 'x', role: 'user' } });
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => feeds.createWithinLimit(user.id, feed(`https://feeds.example.com/${i}.xml`), 3)));
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind === 'limit_reached')).toHaveLength(5);
    expect(await db.prisma.feed.count({ where: { userId: user.id } })).toBe(3);

    const other = await db.prisma.user.create({ data: { username: 'other', passwordHash: 'x', role: 'user' } });
    expect((await feeds.createWithinLimit(other.id, feed('https://feeds.example.com/0.xml'), 3)).kind).toBe('created');
    expect(await feeds.createWithinLimit(other.id, feed('https://feeds.example.com/0.xml'), 3)).toEqual({ kind: 'exists' });
  });

  it('answers unknown_user for a user that does not exist, and writes nothing', async () => {
    const before = await db.prisma.feed.count();
    expect(await feeds.createWithinLimit(987_654, feed('https://feeds.example.com/ghost.xml'), 3)).toEqual({ kind: 'unknown_user' });
    expect(await db.prisma.feed.count()).toBe(before);
  });
});
