/**
 * Feed content as a reader gets it over the REST API: the fixture documents of
 * test/fixtures/feeds/documents served by the local feed server (loopback only), refreshed by an
 * in-process feeds worker. Liberal parsing (feeds without items or title are `ok`), relative URLs
 * resolved against xml:base, Content-Location and the URL after redirects, sanitized content,
 * ill-formed XML refused with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import type { TestPlatform } from '../support/platform.js';
import { startFeedPlatform, subscribeAndRefresh } from './support.js';

describe('feed content', () => {
  let t: TestPlatform;
  let server: FeedServer;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({ env: { FEED_ATTEMPTS: '1' } }));
  });
  afterAll(() => stop?.());

  const refresh = (path: string) => subscribeAndRefresh(t, server, path);

  it.each([
    ['an RSS channel with no items', 'rss-no-items.xml', 'A new blog'],
    ['an Atom 0.3 feed whose only child is a copyright notice', 'atom03-copyright-only.xml', null],
    ['an empty RSS channel', 'rss-empty-channel.xml', null],
    ['an empty RDF document', 'rdf-empty.xml', null],
    ['a JSON Feed with only its version', 'json-version-only.json', null],
  ])('refreshes %s: ok, zero items', async (_name, file, title) => {
    const { task, feed, articles } = await refresh(`/doc/${file}`);
    expect(task.state).toBe('completed');
    expect(task.result).toMatchObject({ outcome: 'refreshed', items: 0, inserted: 0 });
    expect(feed).toMatchObject({ status: 'ok', errorCount: 0, lastError: null, articleCount: 0, title });
    expect(articles).toEqual([]);
  });

  it('refreshes a channel without a title', async () => {
    const { feed, articles } = await refresh('/doc/rss-no-title.xml');
    expect(feed).toMatchObject({ status: 'ok', title: null, siteUrl: server.url('/blog/'), articleCount: 1 });
    expect(articles.map((a) => a.url)).toEqual([server.url('/blog/first')]);
  });

  it('resolves links, enclosures and content URLs against xml:base', async () => {
    const { articles } = await refresh('/doc/rss-xml-base.xml');
    const first = articles.find((a) => a.title === 'Item base');
    expect(first).toMatchObject({
      url: 'http://base.example.test/relative/uri',
      enclosures: [{ url: 'http://base.example.test/items/ep1.mp3', type: 'audio/mpeg', length: 42 }],
      summary: '<a href="http://desc.example.test/d/x.html" rel="nofollow noopener noreferrer">x</a>',
    });
    expect(articles.map((a) => a.url).sort()).toEqual([
      'http://base.example.test/channel/posts/2',
      'http://base.example.test/permalinks/3',
      'http://base.example.test/relative/uri',
    ]);
  });

  it('resolves relative links against Content-Location', async () => {
    const { articles } = await refresh(`/doc/relative-links.xml?content-location=${encodeURIComponent('/located/here/')}`);
    expect(articles.map((a) => a.url).sort()).toEqual([server.url('/abs/item-2'), server.url('/located/here/item-1')]);
    expect(articles.find((a) => a.title === 'One').summary).toBe(
      `<a href="${server.url('/located/here/notes/1')}" rel="nofollow noopener noreferrer">notes</a>`,
    );
  });

  it('resolves relative links against the URL after redirects', async () => {
    const { feed, articles } = await refresh('/redirect-doc/relative-links.xml');
    expect(feed.siteUrl).toBe(server.url('/moved/here/doc/'));
    // (/abs/item-2 is the Content-Location test's article already: articles are unique per user and URL)
    expect(articles.map((a) => a.url)).toContain(server.url('/moved/here/doc/item-1'));
  });

  it('drops links with unsafe schemes', async () => {
    const { task, articles } = await refresh('/doc/unsafe-links.xml');
    expect(task.result).toMatchObject({ items: 2, skippedItems: 5 });
    expect(articles.map((a) => a.url).sort()).toEqual([`${server.url('/doc/unsafe-links.xml')}#keep-me`, 'https://safe.example.test/ok']);
  });

  it('decodes Atom 0.3 base64 and escaped constructs', async () => {
    const { feed, articles } = await refresh('/doc/atom03-modes.xml');
    expect(feed.title).toBe('Base64 feed title');
    expect(articles.find((a) => a.url === 'http://modes.example.test/1')).toMatchObject({
      title: 'Escaped title',
      content: '<p>Base64 <b>content</b></p>',
      summary: 'Plain base64 summary',
    });
  });

  it('serves titles as plain text and content sanitized', async () => {
    const { feed, articles } = await refresh('/doc/hostile-content.xml');
    expect(feed.title).toBe('Hostile feed');
    const [a] = articles;
    expect(a.title).toBe('Title with markup & entities');
    expect(a.summary).toBe('<p>Summary <a rel="nofollow noopener noreferrer">link</a></p>');
    expect(a.content).toContain('<p>Kept text</p>');
    expect(a.content).toContain(`<a href="${server.url('/safe/path')}" rel="nofollow noopener noreferrer">safe link</a>`);
    for (const text of [a.title, a.author]) expect(text).not.toMatch(/[<>]/);
    for (const html of [a.summary, a.content]) {
      expect(html).not.toMatch(/<(script|style|meta|link|iframe|object|embed|form|input|base|svg)\b|\son\w+=|javascript:|style=/i);
    }
  });

  it('refuses ill-formed XML as not_a_feed with the reason', async () => {
    const { task, feed } = await refresh('/doc/malformed-nesting.xml');
    expect(task.state).toBe('failed');
    expect(task.failedReason).toMatch(/^not_a_feed: malformed XML: Expected closing tag 'item'/);
    expect(feed).toMatchObject({ status: 'error', errorCount: 1 });
    expect(feed.lastError).toMatch(/\(line 5, column \d+\)/);
  });
});
