/**
 * Feeds, as a user drives `npm start`: subscribe to several feeds on one host and on a second
 * host, refresh each three times (200, then 304 from its ETag, then changed content), with an
 * HTML page and a failing server showing up as the feed's error, a duplicate subscription (409)
 * and an out-of-range id answered in between, and every refresh after them still succeeding.
 * Then feeds in UTF-16 and UTF-32 (with and without byte-order mark) and in the Channel
 * Definition Format end ok with their titles, and one that cannot be decoded ends in error.
 *
 * (The first refresh after any failed query broke for good on the embedded PGlite this platform
 * used to run: `prepared statement "feeds-find" already exists`.)
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { waitForTask } from '../feeds/support.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

interface Feed {
  id: number;
  url: string;
  title: string | null;
  status: 'pending' | 'ok' | 'error';
  lastError: string | null;
  lastFetchedAt: string | null;
}

describe('feeds through npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-feeds-'));
  const expectations = new Expectations();
  let server: FeedServer;
  let product: ProductProcess;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startFeedServer({ hosts: ['127.0.0.1', '127.0.0.2'] });
    product = await startProduct({
      dataDir,
      port: await freePort(),
      // The feed servers are on loopback, which the outbound policy refuses unless allowed.
      env: { OUTBOUND_ALLOW: '127.0.0.0/8', FEED_RETRY_DELAY_MS: '200', FEED_DOMAIN_MIN_INTERVAL_MS: '200' },
    });
    api = await adminClient(product.url!);
  });
  afterAll(async () => {
    await product?.stop();
    await server?.stop();
    await removeDataDir(dataDir);
  });

  const feed = async (id: number) => (await api.get<Feed>(`/api/feeds/${id}`)).body;
  const articles = async (id: number) =>
    (await api.get<{ articles: { url: string; title: string | null }[] }>(`/api/feeds/${id}/articles?limit=100`)).body.articles;
  /** The feed once its first refresh has ended (ok or error). */
  const settled = (id: number) =>
    waitFor(async () => ((await feed(id)).status !== 'pending' ? feed(id) : undefined), { timeoutMs: 60_000, message: `feed ${id} stayed pending` });

  /** Asks for a refresh now and waits for its task to finish; its result. */
  async function refresh(id: number) {
    const queued = await api.post('/api/queue/schedule-feed', { feed_id: id, force_immediate: true });
    expect(queued.status).toBe(202);
    return waitForTask(api, queued.body.task_id, 60_000);
  }

  it('refreshes feeds on two hosts three times each, through errors and bad requests in between', async () => {
    const names = ['alpha', 'beta', 'gamma', 'delta'];
    const urls = [
      server.url('/versioned/alpha.xml'),
      server.url('/versioned/beta.xml'),
      server.url('/versioned/gamma.xml'),
      server.url('/versioned/delta.xml', '127.0.0.2'),
    ];
    const ids: number[] = [];
    for (const url of urls) {
      const res = await api.post<Feed>('/api/feeds', { url });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const html = (await api.post<Feed>('/api/feeds', { url: server.url('/page.html') })).body.id;
    const broken = (await api.post<Feed>('/api/feeds', { url: server.url('/status/500') })).body.id;
    for (const id of [html, broken]) expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && String(l.jobId).startsWith(`feed-${id}-`));

    // Cycle 1: the first refresh of each feed, scheduled by the subscription: 200, three items.
    for (const id of ids) {
      const f = await waitFor(async () => ((await feed(id)).status === 'ok' ? feed(id) : undefined), {
        timeoutMs: 60_000,
        message: `first refresh of feed ${id}`,
      });
      expect(f.lastError).toBeNull();
      expect(await articles(id)).toHaveLength(3);
    }
    // The HTML page and the failing server show up as the feed's error.
    const htmlFeed = await waitFor(async () => ((await feed(html)).status === 'error' ? feed(html) : undefined), {
      timeoutMs: 60_000,
      message: 'html feed error',
    });
    expect(htmlFeed.lastError).toMatch(/not_a_feed.*HTML/);
    const brokenFeed = await waitFor(async () => ((await feed(broken)).status === 'error' ? feed(broken) : undefined), {
      timeoutMs: 60_000,
      message: '500 feed error',
    });
    expect(brokenFeed.lastError).toMatch(/HTTP 500/);

    // Bad requests in between: each is a failed query or a refused value on the server side.
    const duplicate = await api.post('/api/feeds', { url: urls[0] });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ code: 'feed_exists', field: 'url' });
    const outOfRange = await api.get('/api/feeds/99999999999');
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.body.error.field).toBe('id');

    // Cycle 2: nothing changed, so each server answers 304 to the stored ETag.
    for (const id of ids) {
      const task = await refresh(id);
      expect(task.state).toBe('completed');
      expect(task.result).toMatchObject({ outcome: 'not_modified', httpStatus: 304 });
    }
    expect(server.requests.filter((r) => r.path.startsWith('/versioned/') && r.headers['if-none-match']).length).toBeGreaterThanOrEqual(4);

    // Cycle 3: new content on every feed: one more item each.
    for (const name of names) server.setVersion(name, 2);
    for (const id of ids) {
      const task = await refresh(id);
      expect(task.state).toBe('completed');
      expect(task.result).toMatchObject({ outcome: 'refreshed', httpStatus: 200, inserted: 1 });
      expect(await articles(id)).toHaveLength(4);
      expect((await feed(id)).status).toBe('ok');
    }
    // And another duplicate afterwards changes nothing for the next refresh.
    expect((await api.post('/api/feeds', { url: urls[3] })).status).toBe(409);
    const last = await refresh(ids[3]!);
    expect(last.result).toMatchObject({ outcome: 'not_modified' });
  }, 240_000);

  it('reads feeds in UTF-16, UTF-32 and CDF, and ends one it cannot decode in error', async () => {
    const subscribe = async (path: string) => {
      const res = await api.post<Feed>('/api/feeds', { url: server.url(path) });
      expect(res.status).toBe(201);
      return res.body.id;
    };
    const intl = 'Iñtërnâtiônàlizætiøn 日本語 𝄞';
    const ids = {
      utf16le: await subscribe('/encoded/international.xml?as=utf-16le&declare=utf-16'),
      utf16be: await subscribe('/encoded/international.xml?as=utf-16be&bom=1&declare=utf-16'),
      utf32le: await subscribe('/encoded/international.xml?as=utf-32le&declare=utf-32'),
      utf32be: await subscribe('/encoded/international.xml?as=utf-32be&bom=1&declare=utf-32'),
      cdf: await subscribe('/doc/cdf-channel.xml'),
      ebcdic: await subscribe('/doc/ebcdic.xml'),
    };
    expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && String(l.jobId).startsWith(`feed-${ids.ebcdic}-`));
    for (const id of [ids.utf16le, ids.utf16be, ids.utf32le, ids.utf32be]) {
      expect(await settled(id)).toMatchObject({ status: 'ok', title: intl });
      expect((await articles(id)).map((a) => a.title).sort()).toEqual(['Ünïcödé — “quoted” 😀', 'Ελληνικά и русский']);
    }
    expect(await settled(ids.cdf)).toMatchObject({ status: 'ok', title: 'CDF & channel' });
    expect((await articles(ids.cdf)).map((a) => a.title).sort()).toEqual(['First item', 'Lower-case names', 'Second item']);
    expect(await settled(ids.ebcdic)).toMatchObject({
      status: 'error',
      lastError: 'not_a_feed: cannot decode: the document is in EBCDIC, an encoding this platform does not read',
    });
  }, 120_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
