/**
 * Feed bytes → the feed's title, site link and articles, as a feed reader stores them. Pure: no
 * I/O. Parsing is feedsmith's, and parse-cdf.ts's for the Channel Definition Format; raw-items.ts
 * reads each format's items into one shape. What is read and how liberally (formats, URLs, plain
 * text and sanitized HTML) is docs/feeds.md#content.
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
import { decodeFeedBody, documentSource } from './decode-body.js';
import { parseCdf, type CdfDocument } from './parse-cdf.js';
import {
  atomLink,
  atomText,
  fromAtom,
  fromCdf,
  fromJson,
  fromRdf,
  fromRss,
  html,
  str,
  type Atom,
  type Json,
  type RawItem,
  type Rdf,
  type Rss,
} from './raw-items.js';
import { FeedRefreshError } from './refresh-failure.js';
import { documentBase, isAbsoluteHttpUrl, MAX_URL_LENGTH, resolveHttpUrl } from './resolve-url.js';
import { sanitizeContent } from './sanitize-content.js';
import { decodeTextConstruct, htmlOf, plainText, stripControls, type Decoded } from './text-construct.js';
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

function toDate(value: unknown): Date | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const d = new Date(value.trim());
  return Number.isNaN(d.getTime()) ? null : d;
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

/** `utf8`: the source's UTF-8 bytes when the body is them (decode-body.ts), for the quick well-formedness check. */
function parseXml(source: string, utf8: Uint8Array | null, docBase: string): ParsedXml {
  const root = xmlRoot(source);
  if (!root) throw notAFeed('unrecognized feed format: no XML element');
  const local = localName(root);
  if (local === 'html') throw notAFeed('an HTML page, not a feed');
  const problem = xmlProblem(source, utf8);
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

/** Parses a feed document (bytes as received). Throws FeedRefreshError('not_a_feed'). */
export function parseFeedDocument(body: Uint8Array, contentType: string | null | undefined, feedUrl: string, options: ParseOptions = {}): ParsedFeed {
  const decoded = decodeFeedBody(body, contentType);
  const { source, utf8 } = documentSource(decoded);
  if (!source) throw notAFeed('empty body');
  const docBase = documentBase(feedUrl, options.contentLocation);
  const parsed = source.startsWith('{') || source.startsWith('[') ? parseJson(source) : parseXml(source, utf8, docBase);
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
