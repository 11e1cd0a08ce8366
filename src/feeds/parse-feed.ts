/**
 * Feed bytes → the feed's title, site link and articles, as a feed reader stores them. Pure: no
 * I/O. Parsing is feedsmith's, and parse-cdf.ts's for the Channel Definition Format; what is read
 * and how liberally (formats, URLs, plain text and sanitized HTML) is docs/feeds.md#content.
 *
 * Invariants: a well-formed document whose root is a feed format is a feed, whatever it lacks (an
 * empty one has no items, it is no error); anything else is not_a_feed with the reason. Only
 * http(s) URLs are kept, each resolved against its element's xml:base, then Content-Location,
 * then the feed URL after redirects. An article needs a URL (articles are unique on (url, user)):
 * its link, else its guid/id when that is a URL, else the guid/id anchored on the feed URL; items
 * with none are skipped; duplicate URLs within one document keep the first item. With
 * `maxArticles`, items after that many articles are counted (`unread`) but not read: a refresh
 * stores only its first articles, and the mapping, URL resolution and sanitizing of a 20,000-item
 * document's other items would be spent for nothing.
 */
import { parseAtomFeed, parseJsonFeed, parseRdfFeed, parseRssFeed } from 'feedsmith';
import { decodeFeedBody } from './decode-body.js';
import { parseCdf, type CdfDocument } from './parse-cdf.js';
import { FeedRefreshError } from './refresh-failure.js';
import { documentBase, isAbsoluteHttpUrl, MAX_URL_LENGTH, resolveHttpUrl } from './resolve-url.js';
import { sanitizeContent } from './sanitize-content.js';
import { decodeTextConstruct, htmlOf, plainText, stripControls, type Decoded, type TextConstruct } from './text-construct.js';
import { itemKey, needsAnnotations, pairItemNotes, scanXml, type ElementNotes, type XmlNotes } from './xml-annotations.js';
import { localName, xmlProblem, xmlRoot } from './xml-check.js';
import { toError } from '../errors.js';

export interface ParsedEnclosure {
  url: string;
  type: string | null;
  length: number | null;
}

export interface ParsedArticle {
  url: string;
  guid: string | null;
  /** Plain text. */
  title: string | null;
  /** Plain text. */
  author: string | null;
  /** Sanitized HTML. */
  summary: string | null;
  /** Sanitized HTML. */
  content: string | null;
  publishedAt: Date | null;
  enclosures: ParsedEnclosure[];
}

export type FeedFormat = 'rss' | 'atom' | 'rdf' | 'json' | 'cdf';

export interface ParsedFeed {
  format: FeedFormat;
  /** The encoding the document was read in (decode-body.ts). */
  encoding: string;
  title: string | null;
  siteUrl: string | null;
  articles: ParsedArticle[];
  /** Items without any usable URL or id. */
  skipped: number;
  /** Items after the first `maxArticles` articles (ParseOptions), left unread. */
  unread: number;
}

export interface ParseOptions {
  /** The response's Content-Location header: the document's base when it is an http(s) URL. */
  contentLocation?: string | null;
  /** Read items until this many articles are found; count the rest as `unread` (default: read all). */
  maxArticles?: number;
}

const MAX_ENCLOSURES = 20;
const MAX_GUID_LENGTH = 2048;

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null);

function toDate(value: unknown): Date | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const d = new Date(value.trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

/** An item as read from feedsmith, before URLs are resolved and HTML sanitized. */
interface RawItem {
  link: string | null;
  id: string | null;
  /** An RSS guid that is a permalink (isPermaLink not "false"): a relative one is resolved as a link. */
  idIsPermalink: boolean;
  title: Decoded | null;
  author: string | null;
  summary: Decoded | null;
  content: Decoded | null;
  published: string | null;
  enclosures: { url: string; type: string | null; length: number | null }[];
  /** Where each part's base comes from: the child element's name in the scan (xml-annotations.ts). */
  at: { link: string; id: string; summary: string; content: string };
}

type ChildNames = RawItem['at'];
const RSS_AT: ChildNames = { link: 'link', id: 'guid', summary: 'description', content: 'content:encoded' };
// The id is the item's rdf:about: the item's own base (no child of that name).
const RDF_AT: ChildNames = { link: 'link', id: 'rdf:about', summary: 'description', content: 'content:encoded' };
/** Atom entries and JSON Feed items. */
const ENTRY_AT: ChildNames = { link: 'link', id: 'id', summary: 'summary', content: 'content' };
const CDF_AT: ChildNames = { link: 'href', id: 'id', summary: 'abstract', content: 'content' };

type Rss = NonNullable<ReturnType<typeof parseRssFeed<string>>>;
type Rdf = NonNullable<ReturnType<typeof parseRdfFeed<string>>>;
type Atom = NonNullable<ReturnType<typeof parseAtomFeed<string>>>;
type Json = NonNullable<ReturnType<typeof parseJsonFeed<string>>>;
type RssItem = NonNullable<Rss['items']>[number];
type RdfItem = NonNullable<Rdf['items']>[number];
type AtomEntry = NonNullable<Atom['entries']>[number];
type AtomLinks = AtomEntry['links'];
type JsonItem = NonNullable<Json['items']>[number];

const html = (value: unknown): Decoded | null => decodeTextConstruct({ value: str(value) }, 'html');

/** An Atom text construct with the mode the scan found (Atom 0.3). */
function atomText(tc: { value?: string; type?: string } | undefined, mode: string | undefined): Decoded | null {
  const construct: TextConstruct = { value: tc?.value ?? null, type: tc?.type ?? null, mode: mode ?? null };
  return decodeTextConstruct(construct, 'text');
}

/** The enclosures among `elements` (those `read` gives one for). */
function rawEnclosures<T>(elements: T[] | undefined, read: (element: T) => RawItem['enclosures'][number] | null): RawItem['enclosures'] {
  const out: RawItem['enclosures'] = [];
  if (!elements) return out;
  for (const element of elements) {
    const enclosure = read(element);
    if (enclosure) out.push(enclosure);
  }
  return out;
}

function rssAuthor(item: RssItem): string | null {
  const a = item.authors?.[0];
  return str(a?.name) ?? str(a?.email) ?? str(item.dc?.creators?.[0]);
}

function fromRss(item: RssItem): RawItem {
  return {
    link: str(item.link),
    id: str(item.guid?.value),
    idIsPermalink: item.guid?.isPermaLink !== false,
    title: html(item.title ?? item.dc?.titles?.[0]),
    author: rssAuthor(item),
    summary: html(item.description),
    content: html(item.content?.encoded),
    published: str(item.pubDate) ?? str(item.dc?.dates?.[0]),
    enclosures: rawEnclosures(item.enclosures, (e) => (str(e.url) ? { url: e.url!, type: str(e.type), length: e.length ?? null } : null)),
    at: RSS_AT,
  };
}

function fromRdf(item: RdfItem): RawItem {
  return {
    link: str(item.link),
    id: str(item.rdf?.about),
    idIsPermalink: false,
    title: html(item.title ?? item.dc?.titles?.[0]),
    author: str(item.dc?.creators?.[0]),
    summary: html(item.description),
    content: html(item.content?.encoded),
    published: str(item.dc?.dates?.[0]),
    enclosures: [],
    at: RDF_AT,
  };
}

function atomLink(links: AtomLinks): string | null {
  const alternate = links?.find((l) => l.href && (!l.rel || l.rel === 'alternate')) ?? links?.find((l) => l.href && l.rel !== 'enclosure' && l.rel !== 'self');
  return str(alternate?.href);
}

function fromAtom(entry: AtomEntry, notes: ElementNotes | null): RawItem {
  const modes = notes?.modes;
  const title = atomText(entry.title, modes?.get('title')) ?? html(entry.dc?.titles?.[0]);
  return {
    link: atomLink(entry.links),
    id: str(entry.id),
    idIsPermalink: false,
    title,
    author: str(entry.authors?.[0]?.name) ?? str(entry.authors?.[0]?.email) ?? str(entry.dc?.creators?.[0]),
    summary: atomText(entry.summary, modes?.get('summary')),
    content: atomText(entry.content, modes?.get('content')),
    published: str(entry.published) ?? str(entry.updated) ?? str(entry.dc?.dates?.[0]),
    enclosures: rawEnclosures(entry.links, (l) =>
      l.rel === 'enclosure' && str(l.href) ? { url: l.href!, type: str(l.type), length: l.length ?? null } : null,
    ),
    at: ENTRY_AT,
  };
}

function fromJson(item: JsonItem): RawItem {
  const text = (v: unknown) => decodeTextConstruct({ value: str(v) }, 'text');
  const author = item.authors?.[0];
  return {
    link: str(item.url) ?? str(item.external_url),
    id: item.id === undefined || item.id === null ? null : str(String(item.id)),
    idIsPermalink: false,
    title: text(item.title),
    author: str(author?.name),
    summary: text(item.summary),
    content: html(item.content_html) ?? text(item.content_text),
    published: str(item.date_published) ?? str(item.date_modified),
    enclosures: rawEnclosures(item.attachments, (a) => (str(a.url) ? { url: a.url!, type: str(a.mime_type), length: a.size_in_bytes ?? null } : null)),
    at: ENTRY_AT,
  };
}

/** The base in force on an item's child: the scanned one when the document needed a scan, else the document's. */
const baseOf = (notes: ElementNotes | null, child: string, docBase: string) => (notes ? (notes.childBases.get(child) ?? notes.base) : docBase);

/** The item's guid/id as a link: when it is an absolute http(s) URL, or an RSS permalink guid written as a path. */
function idAsLink(raw: RawItem, notes: ElementNotes | null, docBase: string): string | null {
  if (!raw.id || !(isAbsoluteHttpUrl(raw.id) || (raw.idIsPermalink && /^\s*\.{0,2}\//.test(raw.id)))) return null;
  return resolveHttpUrl(raw.id, baseOf(notes, raw.at.id, docBase));
}

/** The guid/id anchored on the feed URL (the last resort for an article's URL), unless too long. */
function anchoredId(id: string | null, feedUrl: string): string | null {
  if (!id) return null;
  const hash = feedUrl.indexOf('#');
  const anchored = `${hash === -1 ? feedUrl : feedUrl.slice(0, hash)}#${encodeURIComponent(id)}`;
  return anchored.length <= MAX_URL_LENGTH ? anchored : null;
}

function toArticle(raw: RawItem, notes: ElementNotes | null, docBase: string, feedUrl: string): ParsedArticle | null {
  const linkBase = notes ? (raw.link && notes.linkBases.get(raw.link.trim())) || baseOf(notes, raw.at.link, docBase) : docBase;
  const url = resolveHttpUrl(raw.link, linkBase) ?? idAsLink(raw, notes, docBase) ?? anchoredId(raw.id, feedUrl);
  if (!url) return null;
  const enclosures: ParsedEnclosure[] = [];
  for (const e of raw.enclosures) {
    const resolved = resolveHttpUrl(e.url, notes?.linkBases.get(e.url.trim()) ?? notes?.base ?? docBase);
    if (resolved && enclosures.length < MAX_ENCLOSURES && !enclosures.some((x) => x.url === resolved)) {
      enclosures.push({
        url: resolved,
        type: e.type ? stripControls(e.type).slice(0, 255) : null,
        length: Number.isSafeInteger(e.length) && e.length! >= 0 ? e.length : null,
      });
    }
  }
  return {
    url,
    guid: raw.id ? stripControls(raw.id).slice(0, MAX_GUID_LENGTH) : null,
    title: plainText(raw.title),
    author: plainText(raw.author ? { kind: 'html', value: raw.author } : null),
    summary: sanitizeContent(htmlOf(raw.summary), baseOf(notes, raw.at.summary, docBase)),
    content: sanitizeContent(htmlOf(raw.content), baseOf(notes, raw.at.content, docBase)),
    publishedAt: toDate(raw.published),
    enclosures,
  };
}

/** What is read of the feed itself before its items. */
interface Channel {
  title: Decoded | null;
  siteUrl: string | null;
}

function notAFeed(reason: string, cause?: unknown): FeedRefreshError {
  return new FeedRefreshError('not_a_feed', reason, {}, cause === undefined ? undefined : { cause });
}

/** feedsmith's refusal of a document it read nothing from, as opposed to a bug or a broken document. */
const isEmptyRefusal = (err: unknown) => ['ParseError', 'DetectError'].includes(toError(err).name);

function parseJson(source: string): { format: 'json'; feed: Json | null } {
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (err) {
    throw notAFeed(`malformed JSON: ${toError(err).message}`, err);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw notAFeed('unrecognized feed format: JSON that is not an object');
  const version = (json as { version?: unknown }).version;
  const declared = typeof version === 'string' && version.includes('jsonfeed.org/version/');
  try {
    return { format: 'json', feed: parseJsonFeed(json as Record<string, unknown>) };
  } catch (err) {
    if (declared && isEmptyRefusal(err)) return { format: 'json', feed: null };
    throw notAFeed('unrecognized feed format: JSON without a JSON Feed version', err);
  }
}

type XmlFormat = 'rss' | 'rdf' | 'atom' | 'cdf';
const ROOTS: Record<string, XmlFormat> = { rss: 'rss', rdf: 'rdf', feed: 'atom', channel: 'cdf' };

type ParsedXml =
  | { format: 'rss'; feed: Rss | null }
  | { format: 'rdf'; feed: Rdf | null }
  | { format: 'atom'; feed: Atom | null }
  | { format: 'cdf'; feed: CdfDocument };

function parseXml(source: string, docBase: string): ParsedXml {
  const root = xmlRoot(source);
  if (!root) throw notAFeed('unrecognized feed format: no XML element');
  const local = localName(root);
  if (local === 'html') throw notAFeed('an HTML page, not a feed');
  const problem = xmlProblem(source);
  if (problem) throw notAFeed(`malformed XML: ${problem}`);
  const format = ROOTS[local];
  if (!format) throw notAFeed(`unrecognized feed format: root element <${root.slice(0, 64)}>`);
  if (format === 'cdf') return { format, feed: parseCdf(source, docBase) };
  try {
    if (format === 'rss') return { format, feed: parseRssFeed(source) };
    if (format === 'rdf') return { format, feed: parseRdfFeed(source) };
    return { format, feed: parseAtomFeed(source) };
  } catch (err) {
    // Well-formed, and its root is a feed's: a feed with nothing feedsmith could read.
    if (isEmptyRefusal(err)) return { format, feed: null };
    throw notAFeed(`malformed XML: ${toError(err).message}`, err);
  }
}

/** A CDF item as the others: its base travels as the item's notes (every part of it has that base). */
function fromCdf(item: CdfDocument['items'][number]): { raw: RawItem; notes: ElementNotes } {
  return {
    raw: {
      link: item.link,
      id: null,
      idIsPermalink: false,
      title: html(item.title),
      author: null,
      summary: html(item.summary),
      content: null,
      published: str(item.lastmod),
      enclosures: [],
      at: CDF_AT,
    },
    notes: { base: item.base, childBases: new Map(), linkBases: new Map(), modes: new Map(), key: '' },
  };
}

/** Parses a feed document (bytes as received). Throws FeedRefreshError('not_a_feed'). */
export function parseFeedDocument(body: Uint8Array, contentType: string | null | undefined, feedUrl: string, options: ParseOptions = {}): ParsedFeed {
  const decoded = decodeFeedBody(body, contentType);
  const source = decoded.text.replace(/^[\s\uFEFF]+/, '');
  if (!source) throw notAFeed('empty body');
  const docBase = documentBase(feedUrl, options.contentLocation);
  const parsed = source.startsWith('{') || source.startsWith('[') ? parseJson(source) : parseXml(source, docBase);
  const notes: XmlNotes | null =
    parsed.format !== 'json' && parsed.format !== 'cdf' && parsed.feed && needsAnnotations(source) ? scanXml(source, docBase, parsed.format) : null;

  const seen = new Set<string>();
  const articles: ParsedArticle[] = [];
  const limit = options.maxArticles ?? Infinity;
  let skipped = 0;
  let unread = 0;
  const add = (raw: RawItem, itemNotes: ElementNotes | null) => {
    const article = toArticle(raw, itemNotes, docBase, feedUrl);
    if (!article) skipped++;
    else if (!seen.has(article.url)) {
      seen.add(article.url);
      articles.push(article);
    }
  };
  /** Reads `items` in document order until `limit` articles are found; the rest are unread. */
  const read = <T>(items: readonly T[] | undefined, readItem: (item: T, n: number) => void) => {
    if (!items) return;
    for (let n = 0; n < items.length; n++) {
      if (articles.length >= limit) {
        unread = items.length - n;
        return;
      }
      readItem(items[n]!, n);
    }
  };
  let channel: Channel = { title: null, siteUrl: null };
  const paired = <T>(items: T[] | undefined, keyOf: (item: T) => string) => (notes ? pairItemNotes(items ?? [], keyOf, notes) : null);
  const siteBase = notes ? baseOf(notes.channel, 'link', docBase) : docBase;
  switch (parsed.format) {
    case 'rss': {
      const feed = parsed.feed;
      const pairs = paired(feed?.items, (i) => itemKey(i.link, i.guid?.value));
      read(feed?.items, (i, n) => add(fromRss(i), pairs?.[n] ?? null));
      channel = { title: html(feed?.title ?? feed?.dc?.titles?.[0]), siteUrl: resolveHttpUrl(str(feed?.link), siteBase) };
      break;
    }
    case 'rdf': {
      const feed = parsed.feed;
      const pairs = paired(feed?.items, (i) => itemKey(i.link, null));
      read(feed?.items, (i, n) => add(fromRdf(i), pairs?.[n] ?? null));
      channel = { title: html(feed?.title ?? feed?.dc?.titles?.[0]), siteUrl: resolveHttpUrl(str(feed?.link), siteBase) };
      break;
    }
    case 'atom': {
      const feed = parsed.feed;
      const pairs = paired(feed?.entries, (e) => itemKey(e.links?.[0]?.href, e.id));
      read(feed?.entries, (e, n) => add(fromAtom(e, pairs?.[n] ?? null), pairs?.[n] ?? null));
      const link = atomLink(feed?.links);
      const linkBase = notes && link ? (notes.channel.linkBases.get(link.trim()) ?? siteBase) : siteBase;
      channel = { title: atomText(feed?.title, notes?.channel.modes.get('title')) ?? html(feed?.dc?.titles?.[0]), siteUrl: resolveHttpUrl(link, linkBase) };
      break;
    }
    case 'json': {
      const feed = parsed.feed;
      read(feed?.items, (i) => add(fromJson(i), null));
      channel = { title: decodeTextConstruct({ value: str(feed?.title) }, 'text'), siteUrl: resolveHttpUrl(str(feed?.home_page_url), docBase) };
      break;
    }
    case 'cdf': {
      const feed = parsed.feed;
      read(feed.items, (i) => {
        const { raw, notes: itemNotes } = fromCdf(i);
        add(raw, itemNotes);
      });
      channel = { title: html(feed.title), siteUrl: resolveHttpUrl(feed.link, feed.base) };
      break;
    }
  }
  return { format: parsed.format, encoding: decoded.encoding, title: plainText(channel.title), siteUrl: channel.siteUrl, articles, skipped, unread };
}
