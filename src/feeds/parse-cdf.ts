/**
 * A Channel Definition Format document (Microsoft's CDF, 1997: `<CHANNEL HREF=…><TITLE>…</TITLE>
 * <ITEM HREF=… LASTMOD=…><TITLE>…</TITLE><ABSTRACT>…</ABSTRACT></ITEM></CHANNEL>`) → its title,
 * site link and items, as the Universal Feed Parser reads it. Pure: no I/O. feedsmith does not
 * read CDF; the caller has checked that the document is well-formed XML.
 *
 * - Element and attribute names are matched without regard to case (CDF writes them in capitals,
 *   some files do not);
 * - the channel's title and abstract are its own TITLE and ABSTRACT children; its link is its HREF;
 * - an item is every ITEM element inside the channel (nested CHANNELs included), in document
 *   order: link = HREF, title = TITLE, summary = ABSTRACT, date = LASTMOD;
 * - the base of a URL is the BASE attribute (CDF's) or xml:base of the element or its ancestors,
 *   else the document's.
 */
import { Parser } from 'htmlparser2';
import { applyXmlBase } from './resolve-url.js';
import { localName } from './xml-check.js';

export interface CdfItem {
  link: string | null;
  /** The base in force on the item (its HREF is resolved against it). */
  base: string;
  title: string | null;
  summary: string | null;
  lastmod: string | null;
}

export interface CdfDocument {
  title: string | null;
  link: string | null;
  /** The base in force on the channel. */
  base: string;
  items: CdfItem[];
}

/** What TITLE and ABSTRACT children fill: the channel's, or an item's. */
interface Texts {
  title: string | null;
  summary: string | null;
}

interface Frame {
  base: string;
  /** Set on the channel and items (their TITLE/ABSTRACT children fill it), and on such a child. */
  owner?: Texts;
  /** Set on a TITLE/ABSTRACT child: the field its text goes to. */
  field?: keyof Texts;
}

const attr = (attribs: Record<string, string>, name: string): string | undefined => {
  for (const key in attribs) if (key.toLowerCase() === name) return attribs[key];
  return undefined;
};

export function parseCdf(source: string, documentBase: string): CdfDocument {
  const doc: CdfDocument = { title: null, link: null, base: documentBase, items: [] };
  const channel: Texts = { title: null, summary: null };
  const stack: Frame[] = [];
  let channelSeen = false;

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const local = localName(name);
        const parent = stack[stack.length - 1];
        const base = applyXmlBase(applyXmlBase(parent?.base ?? documentBase, attr(attribs, 'xml:base')), attr(attribs, 'base'));
        const frame: Frame = { base };
        if (!channelSeen && local === 'channel') {
          channelSeen = true;
          doc.base = base;
          doc.link = attr(attribs, 'href')?.trim() || null;
          frame.owner = channel;
        } else if (channelSeen && local === 'item') {
          const item: CdfItem = { link: attr(attribs, 'href')?.trim() || null, base, title: null, summary: null, lastmod: attr(attribs, 'lastmod') ?? null };
          doc.items.push(item);
          frame.owner = item;
        } else if (parent?.owner && (local === 'title' || local === 'abstract')) {
          const field = local === 'title' ? 'title' : 'summary';
          // The first TITLE/ABSTRACT of an element counts.
          if (parent.owner[field] === null) {
            parent.owner[field] = '';
            frame.owner = parent.owner;
            frame.field = field;
          }
        }
        stack.push(frame);
      },
      ontext(text) {
        const frame = stack[stack.length - 1];
        if (frame?.field && frame.owner) frame.owner[frame.field] += text;
      },
      onclosetag() {
        stack.pop();
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(source);
  parser.end();
  doc.title = channel.title;
  return doc;
}
