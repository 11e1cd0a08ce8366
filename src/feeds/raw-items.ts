/**
 * Feed items as feedsmith (and parse-cdf.ts) read them, into one shape for every format: the
 * RawItem, before URLs are resolved and HTML sanitized (parse-feed.ts does that). Pure.
 */
import type { parseAtomFeed, parseJsonFeed, parseRdfFeed, parseRssFeed } from 'feedsmith';
import type { CdfDocument } from './parse-cdf.js';
import { decodeTextConstruct, type Decoded, type TextConstruct } from './text-construct.js';
import type { ElementNotes } from './xml-annotations.js';

export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null);

/** An item as read from feedsmith, before URLs are resolved and HTML sanitized. */
export interface RawItem {
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

export type Rss = NonNullable<ReturnType<typeof parseRssFeed<string>>>;
export type Rdf = NonNullable<ReturnType<typeof parseRdfFeed<string>>>;
export type Atom = NonNullable<ReturnType<typeof parseAtomFeed<string>>>;
export type Json = NonNullable<ReturnType<typeof parseJsonFeed<string>>>;
type RssItem = NonNullable<Rss['items']>[number];
type RdfItem = NonNullable<Rdf['items']>[number];
type AtomEntry = NonNullable<Atom['entries']>[number];
type AtomLinks = AtomEntry['links'];
type JsonItem = NonNullable<Json['items']>[number];

export const html = (value: unknown): Decoded | null => decodeTextConstruct({ value: str(value) }, 'html');

/** An Atom text construct with the mode the scan found (Atom 0.3). */
export function atomText(tc: { value?: string; type?: string } | undefined, mode: string | undefined): Decoded | null {
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

export function fromRss(item: RssItem): RawItem {
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

export function fromRdf(item: RdfItem): RawItem {
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

export function atomLink(links: AtomLinks): string | null {
  const alternate = links?.find((l) => l.href && (!l.rel || l.rel === 'alternate')) ?? links?.find((l) => l.href && l.rel !== 'enclosure' && l.rel !== 'self');
  return str(alternate?.href);
}

export function fromAtom(entry: AtomEntry, notes: ElementNotes | null): RawItem {
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

export function fromJson(item: JsonItem): RawItem {
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

/** A CDF item as the others: its base travels as the item's notes (every part of it has that base). */
export function fromCdf(item: CdfDocument['items'][number]): { raw: RawItem; notes: ElementNotes } {
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
