import { describe, expect, it } from 'vitest';
import { decodeFeedBody } from './decode-body.js';
import { parseFeedDocument } from './parse-feed.js';
import { FeedRefreshError } from './refresh-failure.js';

const FEED_URL = 'http://example.test/feed';
const bytes = (s: string) => new TextEncoder().encode(s);

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
const JSON10 = JSON.stringify({ version: 'https://jsonfeed.org/version/1', title: 'J10', items: [{ id: 'a', url: 'http://example.test/a', content_text: 't', author: { name: 'Ed' } }] });

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
    expect(parseFeedDocument(bytes(ATOM1), null, FEED_URL).articles[0]).toMatchObject({ author: 'Cy', summary: 's', content: '<p>c</p>', publishedAt: new Date('2024-01-01T08:00:00Z') });
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

describe('decodeFeedBody', () => {
  it('honours the charset of the Content-Type, the XML declaration and a BOM', () => {
    const latin1 = Uint8Array.from([...bytes('<?xml version="1.0" encoding="ISO-8859-1"?><t>'), 0xe9, ...bytes('</t>')]);
    expect(decodeFeedBody(latin1, null)).toContain('<t>é</t>');
    expect(decodeFeedBody(Uint8Array.from([0xe9]), 'text/xml; charset=windows-1252')).toBe('é');
    expect(decodeFeedBody(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('<a/>')]), 'text/xml; charset=latin1')).toBe('<a/>');
    expect(decodeFeedBody(bytes('ok'), 'text/xml; charset=no-such-charset')).toBe('ok');
  });
});
