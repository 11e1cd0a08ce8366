/**
 * Feed text → the feed's title, site link and articles. Pure: no I/O.
 *
 * Parsing is feedsmith's (RSS 0.9x/1.0/2.0, RDF, Atom 0.3/1.0, JSON Feed 1.0/1.1); this module
 * only maps its four shapes onto one article shape. Nothing is sanitized: what the feed says is
 * stored as it is (HTML stays HTML). An article needs a URL, since articles are unique on
 * (url, user): the item's link, else a guid/id that is a URL, else the guid/id anchored on the
 * feed URL; items with none of these are skipped. Links are resolved against the feed URL.
 * Duplicate URLs within one document keep the first item.
 */
import { parseFeed } from 'feedsmith';
import { decodeFeedBody } from './decode-body.js';
import { FeedRefreshError } from './refresh-failure.js';

export interface ParsedArticle {
  url: string;
  guid: string | null;
  title: string | null;
  author: string | null;
  summary: string | null;
  content: string | null;
  publishedAt: Date | null;
}

export interface ParsedFeed {
  format: 'rss' | 'atom' | 'rdf' | 'json';
  title: string | null;
  siteUrl: string | null;
  articles: ParsedArticle[];
  /** Items without any usable URL or id. */
  skipped: number;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

function absoluteUrl(value: string | null | undefined, base: string): string | null {
  if (!value) return null;
  try {
    const u = new URL(value.trim(), base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

function isAbsoluteHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value.trim());
}

function toDate(value: unknown): Date | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const d = new Date(value.trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

type Parsed = ReturnType<typeof parseFeed<string>>;
type FeedOf<F extends Parsed['format']> = Extract<Parsed, { format: F }>['feed'];
type RssItem = NonNullable<FeedOf<'rss'>['items']>[number];
type RdfItem = NonNullable<FeedOf<'rdf'>['items']>[number];
type AtomEntry = NonNullable<FeedOf<'atom'>['entries']>[number];
type AtomLinks = FeedOf<'atom'>['links'];
type JsonItem = NonNullable<FeedOf<'json'>['items']>[number];

interface RawItem {
  link: string | null;
  id: string | null;
  title: string | null;
  author: string | null;
  summary: string | null;
  content: string | null;
  published: string | null;
}

function fromRss(item: RssItem): RawItem {
  return {
    link: text(item.link),
    id: text(item.guid?.value),
    title: text(item.title),
    author: text(item.authors?.[0]?.name ?? item.authors?.[0]?.email) ?? text(item.dc?.creators?.[0]),
    summary: text(item.description),
    content: text(item.content?.encoded),
    published: text(item.pubDate) ?? text(item.dc?.dates?.[0]),
  };
}

function fromRdf(item: RdfItem): RawItem {
  return {
    link: text(item.link),
    id: text(item.rdf?.about),
    title: text(item.title),
    author: text(item.dc?.creators?.[0]),
    summary: text(item.description),
    content: text(item.content?.encoded),
    published: text(item.dc?.dates?.[0]),
  };
}

function atomLink(links: AtomLinks | AtomEntry['links']): string | null {
  const alternate = links?.find((l) => !l.rel || l.rel === 'alternate') ?? links?.[0];
  return text(alternate?.href);
}

function fromAtom(entry: AtomEntry): RawItem {
  return {
    link: atomLink(entry.links),
    id: text(entry.id),
    title: text(entry.title?.value),
    author: text(entry.authors?.[0]?.name),
    summary: text(entry.summary?.value),
    content: text(entry.content?.value),
    published: text(entry.published) ?? text(entry.updated),
  };
}

function fromJson(item: JsonItem): RawItem {
  return {
    link: text(item.url) ?? text(item.external_url),
    id: item.id === undefined || item.id === null ? null : text(String(item.id)),
    title: text(item.title),
    author: text(item.authors?.[0]?.name),
    summary: text(item.summary),
    content: text(item.content_html) ?? text(item.content_text),
    published: text(item.date_published) ?? text(item.date_modified),
  };
}

function toArticle(raw: RawItem, feedUrl: string): ParsedArticle | null {
  const url =
    absoluteUrl(raw.link, feedUrl) ??
    (raw.id && isAbsoluteHttpUrl(raw.id) ? absoluteUrl(raw.id, feedUrl) : null) ??
    (raw.id ? `${feedUrl.split('#')[0]}#${encodeURIComponent(raw.id)}` : null);
  if (!url) return null;
  return {
    url,
    guid: raw.id,
    title: raw.title,
    author: raw.author,
    summary: raw.summary,
    content: raw.content,
    publishedAt: toDate(raw.published),
  };
}

/** Parses a feed document (bytes as received). Throws FeedRefreshError('not_a_feed'). */
export function parseFeedDocument(body: Uint8Array, contentType: string | null | undefined, feedUrl: string): ParsedFeed {
  const source = decodeFeedBody(body, contentType);
  if (!source.trim()) throw new FeedRefreshError('not_a_feed', 'empty body');
  let parsed: Parsed;
  try {
    parsed = parseFeed<string>(source);
  } catch (err) {
    const name = (err as Error)?.name;
    const looksHtml = /^\s*(<!doctype html|<html[\s>])/i.test(source.slice(0, 512));
    const reason = looksHtml ? 'an HTML page, not a feed' : name === 'MalformedError' ? 'malformed feed document' : 'unrecognized feed format';
    throw new FeedRefreshError('not_a_feed', reason, {}, { cause: err });
  }

  let raws: RawItem[];
  let title: string | null;
  let siteUrl: string | null;
  switch (parsed.format) {
    case 'rss':
      raws = (parsed.feed.items ?? []).map(fromRss);
      title = text(parsed.feed.title);
      siteUrl = text(parsed.feed.link);
      break;
    case 'rdf':
      raws = (parsed.feed.items ?? []).map(fromRdf);
      title = text(parsed.feed.title);
      siteUrl = text(parsed.feed.link);
      break;
    case 'atom':
      raws = (parsed.feed.entries ?? []).map(fromAtom);
      title = text(parsed.feed.title?.value);
      siteUrl = atomLink(parsed.feed.links);
      break;
    case 'json':
      raws = (parsed.feed.items ?? []).map(fromJson);
      title = text(parsed.feed.title);
      siteUrl = text(parsed.feed.home_page_url);
      break;
  }

  const seen = new Set<string>();
  const articles: ParsedArticle[] = [];
  let skipped = 0;
  for (const raw of raws) {
    const article = toArticle(raw, feedUrl);
    if (!article) {
      skipped++;
      continue;
    }
    if (seen.has(article.url)) continue;
    seen.add(article.url);
    articles.push(article);
  }
  return { format: parsed.format, title, siteUrl: absoluteUrl(siteUrl, feedUrl), articles, skipped };
}
