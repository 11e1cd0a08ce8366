/**
 * Every encoding a feed comes in, and the Channel Definition Format, as a reader gets them over
 * the REST API: documents served by the local feed server (loopback only) in UTF-16 and UTF-32
 * (both byte orders, with and without byte-order mark), with an HTTP charset that disagrees with
 * their declaration, in CDF; Atom titles in base64, with comments, with script and style. A
 * document that cannot be read, or whose failure the database refuses to record, ends the feed in
 * `error` with the reason: no feed stays `pending`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_ERROR } from '../../src/feeds/refresh-feed.js';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import type { TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { pendingJobsOfFeed, startFeedPlatform, subscribeAndRefresh, waitForTask } from './support.js';

const INTL_TITLE = 'Iñtërnâtiônàlizætiøn 日本語 𝄞';
const INTL_ITEMS = ['Ünïcödé — “quoted” 😀', 'Ελληνικά и русский'];

describe('feed encodings and formats', () => {
  let t: TestPlatform;
  let server: FeedServer;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({ env: { FEED_ATTEMPTS: '1' } }));
  });
  afterAll(() => stop?.());

  const refresh = (path: string) => subscribeAndRefresh(t, server, path);

  it.each([
    ['utf-16be', true],
    ['utf-16be', false],
    ['utf-16le', true],
    ['utf-16le', false],
    ['utf-32be', true],
    ['utf-32be', false],
    ['utf-32le', true],
    ['utf-32le', false],
    ['utf-8', true],
  ])('reads a document in %s (byte-order mark: %s)', async (encoding, bom) => {
    const declared = encoding.startsWith('utf-8') ? 'utf-8' : encoding.slice(0, 6); // utf-16 / utf-32: no byte order named
    const { task, feed, articles } = await refresh(`/encoded/international.xml?as=${encoding}&bom=${bom ? 1 : 0}&declare=${declared}`);
    expect(feed).toMatchObject({ status: 'ok', lastError: null, title: INTL_TITLE, siteUrl: 'http://intl.example.test/' });
    expect(articles.map((a) => a.title).sort()).toEqual([...INTL_ITEMS].sort());
    expect(articles.find((a) => a.guid === 'intl-1').summary).toBe('Größe &amp; Maß');
    expect(task.result).toMatchObject({ outcome: 'refreshed', format: 'rss', encoding, items: 2, inserted: 2 });
  });

  it('reads a UTF-8 document with a byte-order mark and whitespace, ASCII and Unicode, before its declaration', async () => {
    const lead = encodeURIComponent('\n \t\u00a0\u2003\n');
    const { task, feed, articles } = await refresh(`/encoded/international.xml?as=utf-8&bom=1&declare=utf-8&lead=${lead}`);
    expect(feed).toMatchObject({ status: 'ok', lastError: null, title: INTL_TITLE });
    expect(articles.map((a) => a.title).sort()).toEqual([...INTL_ITEMS].sort());
    expect(task.result).toMatchObject({ outcome: 'refreshed', format: 'rss', encoding: 'utf-8', items: 2 });
  });

  it.each([
    'utf-16be-bom.xml',
    'utf-16be.xml',
    'utf-16be-autodetect.xml',
    'utf-16le-bom.xml',
    'utf-16le.xml',
    'utf-16le-autodetect.xml',
    'utf-32be.xml',
    'utf-32le-bom.xml',
  ])("reads the Universal Feed Parser's %s: ok, no items", async (file) => {
    const { task, feed } = await refresh(`/doc/feedparser/${file}`);
    expect(feed).toMatchObject({ status: 'ok', lastError: null });
    expect(task.result).toMatchObject({ outcome: 'refreshed', format: 'rss', encoding: file.slice(0, 8), items: 0 });
  });

  it('reads UTF-16 without a byte-order mark whatever the HTTP charset says', async () => {
    const { task, feed } = await refresh(`/encoded/international.xml?as=utf-16le&declare=utf-16&type=${encodeURIComponent('application/xml; charset=utf-8')}`);
    expect(feed).toMatchObject({ status: 'ok', title: INTL_TITLE });
    expect(task.result).toMatchObject({ encoding: 'utf-16le', items: 2 });
  });

  it('lets the HTTP charset win over the XML declaration, and the declaration over the default', async () => {
    // UTF-8 bytes declared as iso-8859-1: the header's utf-8 reads them right...
    const withCharset = await refresh(`/doc/utf8-declared-latin1.xml?type=${encodeURIComponent('application/rss+xml; charset=utf-8')}`);
    expect(withCharset.feed.title).toBe('Größe à la française');
    expect(withCharset.task.result.encoding).toBe('utf-8');
    // ...and without a charset the declaration decides (windows-1252 is what browsers read iso-8859-1 as).
    const declared = await refresh('/x/doc/utf8-declared-latin1.xml');
    expect(declared.feed.title).toBe('GrÃ¶ÃŸe Ã la franÃ§aise'); // (the no-break space of "Ã\u00A0" folded)
    expect(declared.task.result.encoding).toBe('windows-1252');
  });

  it('falls back to the declaration when the bytes are not valid in the HTTP charset', async () => {
    const { task, feed, articles } = await refresh(`/doc/latin1.xml?type=${encodeURIComponent('text/xml; charset=utf-8')}`);
    expect(feed.title).toBe('Größe à la française');
    expect(articles.map((a) => a.title)).toEqual(['Café crème']);
    expect(task.result.encoding).toBe('windows-1252');
  });

  it('reads a Channel Definition Format document: title, link and items', async () => {
    const { task, feed, articles } = await refresh('/doc/cdf-channel.xml');
    expect(feed).toMatchObject({ status: 'ok', title: 'CDF & channel', siteUrl: 'http://cdf.example.test/' });
    expect(task.result).toMatchObject({ outcome: 'refreshed', format: 'cdf', items: 3, skippedItems: 1 });
    const byUrl = Object.fromEntries(articles.map((a) => [a.url, a]));
    expect(Object.keys(byUrl).sort()).toEqual([
      'http://cdf.example.test/news/first.html',
      'http://cdf.example.test/news/lower.html',
      'http://cdf.example.test/sub/second.html',
    ]);
    expect(byUrl['http://cdf.example.test/news/first.html']).toMatchObject({
      title: 'First item',
      summary: 'The <b>first</b> abstract',
      publishedAt: '2004-04-07T04:05:43.000Z',
    });
    expect(byUrl['http://cdf.example.test/sub/second.html'].title).toBe('Second item');
    expect(byUrl['http://cdf.example.test/news/lower.html'].title).toBe('Lower-case names');
  });

  it("reads the Universal Feed Parser's CDF document with a BASE", async () => {
    const { task, feed, articles } = await refresh('/doc/feedparser/cdf_item_abstract_xml_base.xml');
    expect(feed).toMatchObject({ status: 'ok', title: 'channel title', siteUrl: 'http://www.example.org/' });
    expect(task.result).toMatchObject({ format: 'cdf', items: 1 });
    expect(articles).toMatchObject([{ url: 'http://base.example.org/item/1', title: 'item title', summary: 'item abstract' }]);
  });

  it('decodes Atom titles in base64, keeps the text around comments, never shows script or style', async () => {
    const { feed, articles } = await refresh('/doc/atom10-title-constructs.xml');
    expect(feed.title).toBe('Example Atom');
    const title = (slug: string) => articles.find((a) => a.url === `http://titles.example.test/${slug}`)?.title;
    expect(title('unclosed-comment')).toBe('safe');
    expect(title('xml-comment')).toBe('safe');
    expect(title('script-style')).toBe('Styled title');
    expect(title('xhtml-script')).toBe('safe description');
    expect(title('base64')).toBe('History of the <blink> tag');
    expect(title('image')).toBeNull(); // an image is no title
  });

  it.each([
    ['EBCDIC', 'ebcdic.xml', 'not_a_feed: cannot decode: the document is in EBCDIC, an encoding this platform does not read'],
    ['invalid UTF-32', 'utf32-invalid.xml', 'not_a_feed: cannot decode: the bytes are not valid UTF-32BE (0x110000 at byte 328 is no character)'],
    ['a NUL byte', 'nul-byte.xml', "not_a_feed: malformed XML: char 'U+0000' is not expected (line 2, column 1)"],
  ])('ends a document it cannot read (%s) in error with the reason', async (_name, file, reason) => {
    const { task, feed } = await refresh(`/doc/${file}`);
    expect(task.state).toBe('failed');
    expect(feed).toMatchObject({ status: 'error', errorCount: 1, lastError: reason });
    expect(feed.nextRefreshAt).not.toBeNull();
  });

  it('records a failure whose reason the database refuses as internal_error: the feed never stays pending', async () => {
    const pool = t.platform.ctx.db.pool;
    await pool.query(
      `CREATE FUNCTION test_refuse_reason() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'reason refused by a test trigger'; END $$`,
    );
    await pool.query(
      `CREATE TRIGGER test_refuse_reason BEFORE UPDATE ON feeds FOR EACH ROW WHEN (NEW.url LIKE '%/refuse-reason/%' AND NEW.last_error LIKE 'not_a_feed%') EXECUTE FUNCTION test_refuse_reason()`,
    );
    try {
      const res = await t.api.post('/api/feeds', { url: server.url('/refuse-reason/doc/malformed-nesting.xml') });
      const feed = await waitFor(
        async () => {
          const view = (await t.api.get(`/api/feeds/${res.body.id}`)).body;
          return view.status === 'pending' ? undefined : view;
        },
        { message: 'the feed stayed pending' },
      );
      expect(feed).toMatchObject({ status: 'error', errorCount: 1, lastError: INTERNAL_ERROR });
      const pending = await waitFor(async () => {
        const jobs = await pendingJobsOfFeed(t.platform.ctx.queues.queue('feedRefresh'), res.body.id);
        return jobs.length ? jobs : undefined;
      });
      expect(pending.map((j) => j.data.trigger)).toEqual(['periodic']);
      const task = await waitForTask(t.api, res.body.taskId);
      expect(task.failedReason).toMatch(/^not_a_feed: malformed XML/); // the operator's view keeps the reason
    } finally {
      await pool.query('DROP TRIGGER test_refuse_reason ON feeds');
      await pool.query('DROP FUNCTION test_refuse_reason()');
    }
  });
});
