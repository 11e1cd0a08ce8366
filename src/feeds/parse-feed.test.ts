import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFeedDocument } from './parse-feed.js';
import { FeedRefreshError } from './refresh-failure.js';

const FEED_URL = 'http://example.test/feed';
const bytes = (s: string) => new TextEncoder().encode(s);
const DOCS = new URL('../../test/fixtures/feeds/documents/', import.meta.url);
const FEEDPARSER = new URL('feedparser/', DOCS);
const doc = (name: string, options: { url?: string; contentLocation?: string } = {}) =>
  parseFeedDocument(readFileSync(new URL(name, DOCS)), null, options.url ?? `http://docs.example.test/feeds/${name}`, {
    contentLocation: options.contentLocation ?? null,
  });
function refusal(run: () => unknown): FeedRefreshError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(FeedRefreshError);
    return e as FeedRefreshError;
  }
  throw new Error('not refused');
}

const RSS2 = `<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>Blog</title><link>http://example.test/</link><description>d</description>
<item><title>One</title><link>/posts/1</link><guid isPermaLink="false">g-1</guid><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
<description>&lt;p&gt;short&lt;/p&gt;</description><content:encoded><![CDATA[<p>full <b>html</b></p>]]></content:encoded><dc:creator>Ann</dc:creator></item>
<item><title>No link</title><guid>g-2</guid></item>
<item><title>Permalink guid</title><guid>http://example.test/posts/3</guid></item>
<item><title>Nothing to key on</title></item>
<item><title>Duplicate</title><link>http://example.test/posts/1</link></item>
</channel></rss>`;

const RSS091 = `<rss version="0.91"><channel><title>Old</title><link>http://example.test/</link><description>d</description>
<item><title>A</title><link>http://example.test/a</link><description>x</description></item></channel></rss>`;

const RDF = `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://example.test/"><title>RDF</title><link>http://example.test/</link><description>d</description></channel>
<item rdf:about="http://example.test/r1"><title>R1</title><link>http://example.test/r1</link><dc:date>2024-02-03T04:05:06Z</dc:date><dc:creator>Bo</dc:creator></item></rdf:RDF>`;

const ATOM1 = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Atom</title><id>urn:feed</id><updated>2024-01-01T00:00:00Z</updated>
<link rel="self" href="http://example.test/atom"/><link href="http://example.test/"/>
<entry><title>E1</title><id>urn:e1</id><updated>2024-01-02T00:00:00Z</updated><published>2024-01-01T08:00:00Z</published>
<link rel="alternate" href="http://example.test/e1"/><summary>s</summary><content type="html">&lt;p&gt;c&lt;/p&gt;</content><author><name>Cy</name></author></entry></feed>`;

const ATOM03 = `<?xml version="1.0"?><feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Old atom</title>
<link rel="alternate" type="text/html" href="http://example.test/"/><modified>2024-01-01T00:00:00Z</modified>
<entry><title>E</title><link rel="alternate" type="text/html" href="http://example.test/e"/><id>urn:e</id>
<issued>2024-01-01T00:00:00Z</issued><modified>2024-01-01T00:00:00Z</modified></entry></feed>`;

const JSON11 = JSON.stringify({
  version: 'https://jsonfeed.org/version/1.1',
  title: 'JSON',
  home_page_url: 'http://example.test/',
  items: [
    { id: '1', url: 'http://example.test/j1', title: 'J1', content_html: '<p>x</p>', date_published: '2024-01-01T00:00:00Z', authors: [{ name: 'Di' }] },
    { id: 'only-id', content_text: 'no url' },
  ],
});
const JSON10 = JSON.stringify({
  version: 'https://jsonfeed.org/version/1',
  title: 'J10',
  items: [{ id: 'a', url: 'http://example.test/a', content_text: 't', author: { name: 'Ed' } }],
});

describe('parseFeedDocument', () => {
  it('maps RSS 2.0 items: relative links, guid fallbacks, duplicates, content and author', () => {
    const feed = parseFeedDocument(bytes(RSS2), 'application/rss+xml', FEED_URL);
    expect(feed).toMatchObject({ format: 'rss', title: 'Blog', siteUrl: 'http://example.test/', skipped: 1 });
    expect(feed.articles.map((a) => a.url)).toEqual(['http://example.test/posts/1', `${FEED_URL}#g-2`, 'http://example.test/posts/3']);
    expect(feed.articles[0]).toEqual({
      url: 'http://example.test/posts/1',
      guid: 'g-1',
      title: 'One',
      author: 'Ann',
      summary: '<p>short</p>',
      content: '<p>full <b>html</b></p>',
      publishedAt: new Date('2024-01-01T10:00:00Z'),
      enclosures: [],
    });
  });

  it('reads items until maxArticles articles are found and counts the rest unread, in document order', () => {
    const read = (maxArticles?: number) => parseFeedDocument(bytes(RSS2), null, FEED_URL, { maxArticles });
    expect(read()).toMatchObject({ skipped: 1, unread: 0 });
    // Items 3–5 (a third article, one without URL, a duplicate) are not read.
    const two = read(2);
    expect(two.articles.map((a) => a.url)).toEqual(['http://example.test/posts/1', `${FEED_URL}#g-2`]);
    expect(two).toMatchObject({ skipped: 0, unread: 3 });
    expect(read(3)).toMatchObject({ skipped: 0, unread: 2 });
    // An item without URL does not count toward the articles.
    expect(read(4)).toMatchObject({ skipped: 1, unread: 0 });
    expect(read(4).articles).toHaveLength(3);
  });

  const items = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join('');
  it.each([
    [
      'Atom 1.0',
      (n: number) =>
        `<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>${items(n, (i) => `<entry><id>urn:x:${i}</id><link href="/${i}"/></entry>`)}</feed>`,
    ],
    [
      'RDF / RSS 1.0',
      (n: number) =>
        `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="http://example.test/"><title>R</title></channel>${items(n, (i) => `<item rdf:about="http://example.test/${i}"><link>http://example.test/${i}</link></item>`)}</rdf:RDF>`,
    ],
    [
      'JSON Feed',
      (n: number) =>
        JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'J', items: Array.from({ length: n }, (_, i) => ({ id: `${i}`, url: `/${i}` })) }),
    ],
    [
      'CDF',
      (n: number) =>
        `<CHANNEL HREF="http://example.test/"><TITLE>C</TITLE>${items(n, (i) => `<ITEM HREF="http://example.test/${i}"><TITLE>T</TITLE></ITEM>`)}</CHANNEL>`,
    ],
  ])('reads %s items up to maxArticles', (_name, make) => {
    const source = bytes(make(6));
    const all = parseFeedDocument(source, null, FEED_URL);
    expect(all.articles).toHaveLength(6);
    const some = parseFeedDocument(source, null, FEED_URL, { maxArticles: 4 });
    expect(some.articles.map((a) => a.url)).toEqual(all.articles.slice(0, 4).map((a) => a.url));
    expect(some.unread).toBe(2);
  });

  it.each([
    ['RSS 0.91', RSS091, 'rss', 'Old', 'http://example.test/a'],
    ['RDF / RSS 1.0', RDF, 'rdf', 'RDF', 'http://example.test/r1'],
    ['Atom 1.0', ATOM1, 'atom', 'Atom', 'http://example.test/e1'],
    ['Atom 0.3', ATOM03, 'atom', 'Old atom', 'http://example.test/e'],
    ['JSON Feed 1.1', JSON11, 'json', 'JSON', 'http://example.test/j1'],
    ['JSON Feed 1.0', JSON10, 'json', 'J10', 'http://example.test/a'],
  ])('parses %s', (_name, doc, format, title, firstUrl) => {
    const feed = parseFeedDocument(bytes(doc), null, FEED_URL);
    expect(feed.format).toBe(format);
    expect(feed.title).toBe(title);
    expect(feed.articles[0]!.url).toBe(firstUrl);
  });

  it('reads dates and authors from Atom and RDF', () => {
    expect(parseFeedDocument(bytes(ATOM1), null, FEED_URL).articles[0]).toMatchObject({
      author: 'Cy',
      summary: 's',
      content: '<p>c</p>',
      publishedAt: new Date('2024-01-01T08:00:00Z'),
    });
    expect(parseFeedDocument(bytes(RDF), null, FEED_URL).articles[0]).toMatchObject({ author: 'Bo', publishedAt: new Date('2024-02-03T04:05:06Z') });
  });

  it.each([
    ['an HTML page', '<!DOCTYPE html><html><head><title>x</title></head><body>hi</body></html>', /HTML page/],
    ['malformed XML', '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>A<', /malformed|unrecognized/],
    ['plain text', 'hello', /unrecognized/],
    ['an empty body', '   ', /empty/],
  ])('refuses %s as not_a_feed', (_name, doc, message) => {
    let err: unknown;
    try {
      parseFeedDocument(bytes(doc), 'text/html', FEED_URL);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FeedRefreshError);
    expect((err as FeedRefreshError).failure).toBe('not_a_feed');
    expect((err as FeedRefreshError).permanent).toBe(true);
    expect((err as FeedRefreshError).message).toMatch(message);
  });
});

describe('parseFeedDocument: liberal', () => {
  it.each([
    ['an RSS channel with no items', 'rss-no-items.xml', 'rss', 'A new blog'],
    ['an empty RSS channel', 'rss-empty-channel.xml', 'rss', null],
    ['an Atom 0.3 feed whose only child is a copyright notice', 'atom03-copyright-only.xml', 'atom', null],
    ['an empty Atom 1.0 feed', 'atom10-empty.xml', 'atom', null],
    ['an empty RDF document', 'rdf-empty.xml', 'rdf', null],
    ['a JSON Feed with only its version', 'json-version-only.json', 'json', null],
  ])('reads %s as a feed with no items', (_name, file, format, title) => {
    expect(doc(file)).toEqual({
      format,
      encoding: 'utf-8',
      title,
      siteUrl: format === 'rss' && title ? 'http://blog.example.test/' : null,
      articles: [],
      skipped: 0,
      unread: 0,
    });
  });

  it('reads a channel without a title', () => {
    const feed = doc('rss-no-title.xml');
    expect(feed).toMatchObject({ format: 'rss', title: null, siteUrl: 'http://docs.example.test/blog/' });
    expect(feed.articles.map((a) => [a.url, a.title])).toEqual([['http://docs.example.test/blog/first', 'Untitled channel, titled item']]);
  });

  it('takes the format from the root element, not from markup quoted in the content', () => {
    const feed = doc('atom-mentions-rss.xml');
    expect(feed.format).toBe('atom');
    expect(feed.articles[0]!.url).toBe('http://mentions.example.test/1');
  });

  it('forgives a bare ampersand and HTML entities', () => {
    const feed = doc('bare-ampersand.xml');
    expect(feed.title).toBe('AT&T News today');
    expect(feed.articles[0]).toMatchObject({ title: 'Q&A', url: 'http://amp.example.test/qa?a=1&b=2' });
  });

  it('refuses ill-formed XML with the reason and its position', () => {
    const err = refusal(() => doc('malformed-nesting.xml'));
    expect(err.failure).toBe('not_a_feed');
    expect(err.message).toMatch(/^malformed XML: Expected closing tag 'item' .* \(line 5, column \d+\)$/);
  });

  it.each([
    ['XML whose root is not a feed', '<?xml version="1.0"?><opml version="2.0"><body/></opml>', /unrecognized feed format: root element <opml>/],
    ['JSON that is not a JSON Feed', '{"hello": "world"}', /JSON without a JSON Feed version/],
    ['broken JSON', '{"version": "https://jsonfeed.org/version/1.1",', /malformed JSON/],
    ['a JSON array', '[1, 2]', /JSON that is not an object/],
  ])('refuses %s', (_name, source, message) => {
    const err = refusal(() => parseFeedDocument(bytes(source), null, FEED_URL));
    expect(err.failure).toBe('not_a_feed');
    expect(err.message).toMatch(message);
  });
});

describe('parseFeedDocument: URLs', () => {
  it('resolves Atom links, enclosures and content against xml:base on the feed, entry, link and content', () => {
    const feed = doc('atom-xml-base.xml');
    expect(feed.siteUrl).toBe('http://base.example.test/root/site/');
    const [one, two, three] = feed.articles;
    expect(one).toMatchObject({
      url: 'http://base.example.test/root/entries/one.html',
      enclosures: [{ url: 'http://base.example.test/root/entries/media/one.mp3', type: 'audio/mpeg', length: 1234 }],
      content:
        '<p><a href="http://base.example.test/content/dir/page.html" rel="nofollow noopener noreferrer">a page</a> <img src="http://base.example.test/content/img/pic.png" alt="pic" /></p>',
    });
    expect(two).toMatchObject({
      url: 'http://other.example.test/x/two.html',
      summary: '<a href="http://base.example.test/relative/uri" rel="nofollow noopener noreferrer">rel</a>',
    });
    // xml:base="javascript:..." is not a base: the feed's stays.
    expect(three!.url).toBe('http://base.example.test/root/three.html');
  });

  it('resolves RSS links, permalink guids, enclosures and content against xml:base on the channel, item and description', () => {
    const feed = doc('rss-xml-base.xml');
    expect(feed.siteUrl).toBe('http://base.example.test/channel/home/');
    expect(feed.articles.map((a) => a.url)).toEqual([
      'http://base.example.test/relative/uri',
      'http://base.example.test/channel/posts/2',
      'http://base.example.test/permalinks/3',
    ]);
    expect(feed.articles[0]).toMatchObject({
      enclosures: [{ url: 'http://base.example.test/items/ep1.mp3', type: 'audio/mpeg', length: 42 }],
      summary: '<a href="http://desc.example.test/d/x.html" rel="nofollow noopener noreferrer">x</a>',
      content:
        '<p><img src="http://base.example.test/items/img/a.png" srcset="http://base.example.test/items/img/a.png 1x, http://base.example.test/items/img/a2.png 2x" /></p>',
    });
  });

  it('resolves against Content-Location (itself relative to the URL) when there is no xml:base, else against the URL after redirects', () => {
    const located = doc('relative-links.xml', { contentLocation: '/located/here/' });
    expect(located.siteUrl).toBe('http://docs.example.test/located/here/');
    expect(located.articles.map((a) => a.url)).toEqual(['http://docs.example.test/located/here/item-1', 'http://docs.example.test/abs/item-2']);
    expect(located.articles[0]!.summary).toBe('<a href="http://docs.example.test/located/here/notes/1" rel="nofollow noopener noreferrer">notes</a>');
    const moved = doc('relative-links.xml', { url: 'http://moved.example.test/a/b/feed.xml', contentLocation: 'javascript:alert(1)' });
    expect(moved.articles.map((a) => a.url)).toEqual(['http://moved.example.test/a/b/item-1', 'http://moved.example.test/abs/item-2']);
  });

  it('drops links with unsafe schemes (the item falls back to its guid, or is skipped)', () => {
    const feed = doc('unsafe-links.xml');
    expect(feed.articles.map((a) => [a.title, a.url, a.enclosures])).toEqual([
      ['unsafe link, safe guid', 'http://docs.example.test/feeds/unsafe-links.xml#keep-me', []],
      ['safe', 'https://safe.example.test/ok', []],
    ]);
    expect(feed.skipped).toBe(5);
  });

  it('resolves JSON Feed URLs and attachments against the document', () => {
    const feed = doc('json-feed-relative.json');
    expect(feed).toMatchObject({ title: 'JSON relative', siteUrl: 'http://docs.example.test/home/' });
    expect(feed.articles[0]).toMatchObject({
      url: 'http://docs.example.test/feeds/posts/1',
      title: 'JSON item',
      summary: 'Plain &lt;summary&gt; text',
      content: '<p>Hello <img src="http://docs.example.test/img/1.png" /></p>',
      enclosures: [{ url: 'http://docs.example.test/media/1.mp3', type: 'audio/mpeg', length: 99 }],
    });
    expect(feed.articles[1]).toMatchObject({ url: 'http://docs.example.test/feeds/json-feed-relative.json#j2', content: 'a &lt; b &amp; c' });
  });
});

describe('parseFeedDocument: text', () => {
  it('decodes Atom 1.0 text constructs: html, xhtml (prefixed or not), text', () => {
    const feed = doc('atom10-text-constructs.xml');
    expect(feed.title).toBe('The XHTML feed');
    expect(feed.articles.map((a) => a.title)).toEqual(['Bold & escaped', 'Prefixed & italic', 'Plain text title, with CDATA']);
    expect(feed.articles[0]!.content).toBe('<p>Inline <strong>xhtml</strong></p>');
    expect(feed.articles[1]!.summary).toBe('Plain   text\n      summary with &lt;angle&gt; brackets');
    // content type="image/png" is not text
    expect(feed.articles[2]!.content).toBeNull();
  });

  it('decodes Atom 0.3 modes: base64, escaped, inline xml', () => {
    const feed = doc('atom03-modes.xml');
    expect(feed.title).toBe('Base64 feed title');
    expect(feed.articles[0]).toMatchObject({
      title: 'Escaped title',
      content: '<p>Base64 <b>content</b></p>',
      summary: 'Plain base64 summary',
      publishedAt: new Date('2004-05-01T10:00:00Z'),
    });
    expect(feed.articles[1]!.content).toBe('<p>Inline <b>XML</b> mode</p>');
  });

  it('decodes Atom 1.0 constructs of another MIME type as base64: text kept, an image dropped', () => {
    const feed = doc('atom10-title-constructs.xml');
    expect(feed.title).toBe('Example Atom');
    const title = (slug: string) => feed.articles.find((a) => a.url === `http://titles.example.test/${slug}`)!.title;
    expect(title('base64')).toBe('History of the <blink> tag');
    expect(title('image')).toBeNull();
  });

  it('keeps the text around comments and never shows script or style as text', () => {
    const feed = doc('atom10-title-constructs.xml');
    const title = (slug: string) => feed.articles.find((a) => a.url === `http://titles.example.test/${slug}`)!.title;
    expect(title('unclosed-comment')).toBe('safe');
    expect(title('xml-comment')).toBe('safe');
    expect(title('script-style')).toBe('Styled title');
    expect(title('xhtml-script')).toBe('safe description');
  });

  it("reads the titles of the Universal Feed Parser's tests as it does (as text)", () => {
    // Its entries have no link or id: the title is read as the feed's here, by a document URL per file.
    const read = (file: string) => parseFeedDocument(readFileSync(new URL(file, FEEDPARSER)), 'application/xml', 'http://docs.example.test/feed');
    expect(read('feed_title_base64.xml').title).toBe('Example Atom'); // 'Example <b>Atom</b>' as text
    expect(read('feed_title_base64_2.xml').title).toBe('History of the <blink> tag'); // '<p>History of the &lt;blink&gt; tag</p>'
    expect(read('xml_malicious_comment.xml').title).toBe('safe');
    const entryTitle = (file: string) => {
      const source = readFileSync(new URL(file, FEEDPARSER), 'utf8').replace(/<entry>/, '<entry><link href="http://docs.example.test/e"/>');
      return parseFeedDocument(bytes(source), 'application/xml', FEED_URL).articles[0]!.title;
    };
    expect(entryTitle('entry_title_base64.xml')).toBe('Example Atom');
    expect(entryTitle('entry_title_base64_2.xml')).toBe('History of the <blink> tag');
    expect(entryTitle('entry_title_script_inline.xml')).toBe('safe description');
    expect(entryTitle('entry_title_script_cdata.xml')).toBe('safe description');
    expect(entryTitle('entry_title_object.xml')).toBe('safe description');
  });

  it('falls back to dc:title, dc:creator and dc:date only where the core element is missing', () => {
    const feed = doc('dc-fallbacks.xml');
    expect(feed.title).toBe('Dublin Core channel');
    expect(feed.articles.map((a) => [a.title, a.author, a.publishedAt?.toISOString()])).toEqual([
      ['Dublin Core title', 'Dee Creator', '2024-02-03T04:05:06.000Z'],
      ['Core wins', 'Core Author', '2024-02-03T10:00:00.000Z'],
    ]);
  });

  it('stores titles and authors as plain text and summaries and content sanitized', () => {
    const feed = doc('hostile-content.xml');
    expect(feed.title).toBe('Hostile feed');
    const [a] = feed.articles;
    expect(a!.title).toBe('Title with markup & entities');
    expect(a!.author).not.toMatch(/[<>]/);
    expect(a!.summary).toBe('<p>Summary <a rel="nofollow noopener noreferrer">link</a></p>');
    expect(a!.content).toContain('<p>Kept text</p>');
    expect(a!.content).toContain('<img src="http://docs.example.test/feeds/photo.jpg" alt="photo" />');
    expect(a!.content).toContain('<a href="http://docs.example.test/safe/path" rel="nofollow noopener noreferrer">safe link</a>');
    expect(a!.content).not.toMatch(/<(script|style|meta|link|iframe|object|embed|form|input|base|svg)\b|on\w+=|javascript:|style=/i);
  });
});

describe('parseFeedDocument: encodings', () => {
  it('reads a document in any encoding and says which', () => {
    const text = readFileSync(new URL('international.xml', DOCS), 'utf8').replace('encoding="utf-8"', 'encoding="utf-16"');
    const utf16be = Buffer.from(`\uFEFF${text}`, 'utf16le').swap16();
    const feed = parseFeedDocument(utf16be, 'application/xml; charset=utf-8', FEED_URL);
    expect(feed).toMatchObject({ format: 'rss', encoding: 'utf-16be', title: 'Iñtërnâtiônàlizætiøn 日本語 𝄞' });
    expect(feed.articles.map((a) => a.title)).toEqual(['Ünïcödé — “quoted” 😀', 'Ελληνικά и русский']);
    expect(doc('latin1.xml')).toMatchObject({ encoding: 'windows-1252', title: 'Größe à la française' });
  });

  it('refuses a document it cannot decode, and shows a NUL in a reason by its code point', () => {
    expect(refusal(() => doc('ebcdic.xml')).message).toMatch(/^cannot decode: the document is in EBCDIC/);
    expect(refusal(() => doc('utf32-invalid.xml')).message).toMatch(/^cannot decode: the bytes are not valid UTF-32BE/);
    expect(refusal(() => doc('nul-byte.xml')).message).toBe("malformed XML: char 'U+0000' is not expected (line 2, column 1)");
  });
});

describe('parseFeedDocument: Channel Definition Format', () => {
  it('reads the channel title, link and items: HREF against BASE, TITLE, ABSTRACT, LASTMOD', () => {
    const feed = doc('cdf-channel.xml');
    expect(feed).toMatchObject({ format: 'cdf', title: 'CDF & channel', siteUrl: 'http://cdf.example.test/', skipped: 1 });
    expect(feed.articles).toEqual([
      {
        url: 'http://cdf.example.test/news/first.html',
        guid: null,
        title: 'First item',
        author: null,
        summary: 'The <b>first</b> abstract',
        content: null,
        publishedAt: new Date('2004-04-07T04:05:43Z'),
        enclosures: [],
      },
      expect.objectContaining({ url: 'http://cdf.example.test/sub/second.html', title: 'Second item', summary: null, publishedAt: null }),
      expect.objectContaining({ url: 'http://cdf.example.test/news/lower.html', title: 'Lower-case names' }),
    ]);
  });

  it("reads the Universal Feed Parser's CDF documents as it does", () => {
    const read = (name: string) => parseFeedDocument(readFileSync(new URL(`cdf_${name}.xml`, FEEDPARSER)), 'application/xml', FEED_URL);
    expect(read('channel_title').title).toBe('Example feed');
    expect(read('channel_href_map_link').siteUrl).toBe('http://www.example.org/');
    expect(read('item_href_map_link').articles.map((a) => a.url)).toEqual(['http://www.example.org/']);
    expect(read('item_abstract_xml_base')).toMatchObject({
      title: 'channel title',
      siteUrl: 'http://www.example.org/',
      articles: [expect.objectContaining({ url: 'http://base.example.org/item/1', title: 'item title', summary: 'item abstract' })],
    });
    // Items without HREF have no URL to store; their title and abstract are read all the same (the feed is ok).
    for (const name of ['item_title', 'item_abstract_map_description', 'item_lastmod', 'channel_abstract_map_description', 'channel_lastmod']) {
      expect(read(name), name).toMatchObject({ format: 'cdf', articles: [] });
    }
  });
});
