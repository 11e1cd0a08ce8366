/**
 * What feedsmith does not report about an XML feed: the base URL in force at each element
 * (`xml:base` on the channel/feed, on an item/entry, on its link, content, summary or enclosure
 * elements) and the Atom 0.3 `mode` of text constructs (base64, escaped, xml). Pure: no I/O.
 *
 * One streaming pass (htmlparser2 in XML mode), run only when the document uses `xml:base` or a
 * `mode` attribute: the other documents need none of it (every base is the document's).
 *
 * Items are reported in document order with a key (their link and guid/id text) so that the
 * caller can pair them with feedsmith's items (pairItemNotes): feedsmith keeps the order but
 * leaves out items it reads nothing from.
 */
import { Parser } from 'htmlparser2';
import { applyXmlBase } from './resolve-url.js';
import { localName } from './xml-check.js';

export interface ElementNotes {
  /** Base in force on the element itself. */
  base: string;
  /** Base in force on the first child element of each name (qualified name lower-cased, and local name). */
  childBases: Map<string, string>;
  /** Base in force on each link/enclosure element, by its href/url. */
  linkBases: Map<string, string>;
  /** The `mode` attribute of each child element that has one (Atom 0.3), by local name. */
  modes: Map<string, string>;
  /** Link text or href, then guid/id text: pairs the item with feedsmith's. */
  key: string;
}

export interface XmlNotes {
  /** The channel (RSS, RDF) or the feed element (Atom). */
  channel: ElementNotes;
  items: ElementNotes[];
}

/** True when the document carries anything this module reports. */
export function needsAnnotations(source: string): boolean {
  // One expression for both: the regular expression engine skips through the text faster than
  // indexOf('mode') does.
  return /xml:base|\smode\s*=/.test(source);
}

const notesAt = (base: string): ElementNotes => ({ base, childBases: new Map(), linkBases: new Map(), modes: new Map(), key: '' });

/** Key of an item: the whitespace-free link and id texts (both sides compute it the same way). */
export function itemKey(link: string | null | undefined, id: string | null | undefined): string {
  return `${(link ?? '').replace(/\s+/g, '')}\u0000${(id ?? '').replace(/\s+/g, '')}`;
}

/**
 * Scans the document. `root` is the format's root local name (rss, rdf, feed); the channel is the
 * RSS/RDF `channel` element or the Atom root; items are `item` (RSS, RDF) or `entry` (Atom)
 * elements that are children of the channel (RSS), of the root (RDF, Atom).
 */
export function scanXml(source: string, documentBase: string, format: 'rss' | 'rdf' | 'atom'): XmlNotes {
  const itemName = format === 'atom' ? 'entry' : 'item';
  const result: XmlNotes = { channel: notesAt(documentBase), items: [] };
  let channelSeen = false;
  interface Frame {
    local: string;
    base: string;
    /** Set on the channel and on items: their children are noted. */
    notes?: ElementNotes;
    link?: string;
    id?: string;
    /** Set on a link/guid/id child: where its text goes. */
    collect?: { frame: Frame; field: 'link' | 'id' };
  }
  const stack: Frame[] = [];

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const local = localName(name);
        const depth = stack.length;
        const parent = stack[depth - 1];
        const base = applyXmlBase(parent?.base ?? documentBase, attribs['xml:base']);
        const frame: Frame = { local, base };
        stack.push(frame);

        const isChannel = !channelSeen && (format === 'atom' ? depth === 0 : depth === 1 && local === 'channel');
        const isItem = local === itemName && (format === 'rss' ? depth === 2 && parent?.local === 'channel' : depth === 1);
        if (isChannel) {
          channelSeen = true;
          result.channel.base = base;
          frame.notes = result.channel;
          return;
        }
        if (isItem) {
          frame.notes = notesAt(base);
          frame.link = '';
          frame.id = '';
          result.items.push(frame.notes);
          return;
        }
        const noted = parent?.notes;
        if (!parent || !noted) return;
        const qname = name.toLowerCase();
        if (!noted.childBases.has(qname)) noted.childBases.set(qname, base);
        if (!noted.childBases.has(local)) noted.childBases.set(local, base);
        if (attribs.mode !== undefined && !noted.modes.has(local)) noted.modes.set(local, attribs.mode);
        const href = local === 'link' ? attribs.href : local === 'enclosure' ? attribs.url : undefined;
        if (href !== undefined) {
          if (!noted.linkBases.has(href.trim())) noted.linkBases.set(href.trim(), base);
          if (local === 'link' && parent.link === '') parent.link = href;
        } else if (qname === 'link' && parent.link === '') frame.collect = { frame: parent, field: 'link' };
        else if ((format === 'atom' ? local === 'id' : qname === 'guid') && parent.id === '') frame.collect = { frame: parent, field: 'id' };
      },
      ontext(text) {
        const collect = stack[stack.length - 1]?.collect;
        if (collect) collect.frame[collect.field] += text;
      },
      onclosetag() {
        const frame = stack.pop();
        if (frame?.notes && frame.notes !== result.channel) frame.notes.key = itemKey(frame.link, frame.id);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(source);
  parser.end();
  return result;
}

/**
 * Pairs feedsmith's items (in document order, some left out) with the scanned ones: each takes the
 * next scanned item with the same key, looking a few items ahead; an item without a partner
 * (a key read differently) gets the channel's notes.
 */
export function pairItemNotes<T>(items: T[], keyOf: (item: T) => string, notes: XmlNotes): ElementNotes[] {
  const LOOKAHEAD = 32;
  const out: ElementNotes[] = [];
  let next = 0;
  for (const item of items) {
    const key = keyOf(item);
    let found = -1;
    for (let k = next; k < Math.min(notes.items.length, next + LOOKAHEAD); k++) {
      if (notes.items[k]!.key === key) {
        found = k;
        break;
      }
    }
    if (found === -1) out.push(notes.channel);
    else {
      out.push(notes.items[found]!);
      next = found + 1;
    }
  }
  return out;
}
