/**
 * Feed text → what is stored: titles and authors as plain text, summaries and content as HTML
 * (sanitized afterwards, sanitize-content.ts). Pure: no I/O.
 *
 * An Atom text construct says what it holds: `type` text / html / xhtml (Atom 1.0) or a MIME type
 * (Atom 0.3: text/plain, text/html, application/xhtml+xml), and in Atom 0.3 a `mode`: xml (inline,
 * the default), escaped (entity-escaped markup, what feedsmith already unescaped) or base64.
 * A construct of any other MIME type holds Base64 (Atom 1.0, RFC 4287 section 4.1.3.3, which the
 * Universal Feed Parser applies to titles too: `type="application/octet-stream"`): it is kept,
 * and read as HTML, when the decoded bytes are UTF-8 text; an image or other binary is dropped.
 * RSS and RDF elements carry no type: their titles and descriptions are read as HTML, as feed
 * readers do (plain text reads the same as HTML unless it holds markup or entities).
 *
 * Plain text: markup stripped (the content of script, style and the like with it: never shown as
 * text), comments dropped (one never closed with `-->` ends at its first `>`, as SGML and the
 * Universal Feed Parser read it, rather than hiding the rest), entities decoded, whitespace
 * folded to single spaces, control characters removed (PostgreSQL refuses U+0000 in text), at
 * most MAX_TEXT_LENGTH characters.
 */
import { Parser } from 'htmlparser2';

export const MAX_TEXT_LENGTH = 1000;

/** What a text construct holds once decoded. */
export type Decoded = { kind: 'html'; value: string } | { kind: 'text'; value: string };

export interface TextConstruct {
  value?: string | null;
  type?: string | null;
  mode?: string | null;
}

// C0 controls but tab, newline and carriage return, and DEL.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
// eslint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** True when stripControls would change `value`. */
export const hasControls = (value: string) => HAS_CONTROL.test(value);

/** Removes characters that PostgreSQL text or an HTML reader cannot take. */
export function stripControls(value: string): string {
  // Testing first is cheaper on the common string without any (a replace scans and copies).
  return HAS_CONTROL.test(value) ? value.replace(CONTROL, '') : value;
}

/** Whitespace runs → one space, trimmed. */
function foldWhitespace(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

// Elements whose text is not text a reader sees. (An object's content is its fallback, shown
// where the object is not: kept, like the text after an `<object>` never closed.)
const HIDDEN = new Set(['script', 'style', 'template', 'noscript', 'iframe', 'svg', 'math', 'head', 'title', 'textarea', 'select']);
// Elements that separate words when rendered.
const BLOCK = new Set(['br', 'p', 'div', 'li', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr', 'dt', 'dd']);

/** A tag's name without its namespace prefix (XHTML in an Atom feed may write `<xh:script>`). */
const localTag = (name: string) => (name.includes(':') ? name.slice(name.indexOf(':') + 1) : name);

/**
 * Drops the comments that are never closed with `-->` up to their first `>` (`sa<!-- -- x >fe`
 * is `safe`): an HTML parser would take all the rest of the text for the comment. Closed
 * comments are left to the parser.
 */
function closeOpenComments(html: string): string {
  let out = '';
  let from = 0;
  for (let at = html.indexOf('<!--'); at !== -1; at = html.indexOf('<!--', from)) {
    const close = html.indexOf('-->', at + 4);
    if (close !== -1) {
      out += html.slice(from, close + 3);
      from = close + 3;
      continue;
    }
    const gt = html.indexOf('>', at + 4);
    if (gt === -1) break;
    out += html.slice(from, at);
    from = gt + 1;
  }
  return from === 0 ? html : out + html.slice(from);
}

// What foldWhitespace(stripControls(…)) would change: whitespace other than single inner spaces, or a control.
// eslint-disable-next-line no-control-regex
const NOT_FOLDED = /[^\S ]| {2}|^ | $|[\u0000-\u0008\u000E-\u001F\u007F]/;

// Inline elements: opening or closing one closes no other element (htmlparser2's implied ends)
// and separates no words, so the text of HTML whose only markup is these is the text between them.
const INLINE = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'del',
  'dfn',
  'em',
  'i',
  'ins',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
]);

/** The text between the tags of HTML whose only markup is `<name>` and `</name>` of INLINE elements, without references; else null. */
function inlineMarkupText(html: string): string | null {
  if (html.includes('&')) return null;
  let out = '';
  let from = 0;
  for (let lt = html.indexOf('<'); lt !== -1; lt = html.indexOf('<', from)) {
    const gt = html.indexOf('>', lt);
    if (gt === -1 || !INLINE.has(html.slice(html.charCodeAt(lt + 1) === 47 ? lt + 2 : lt + 1, gt))) return null;
    out += html.slice(from, lt);
    from = gt + 1;
  }
  return out + html.slice(from);
}

/** HTML → the text a reader would see: tags dropped (with the content of script/style/...), comments dropped, entities decoded, whitespace folded. */
export function htmlToText(html: string): string {
  if (!/[<&]/.test(html)) return NOT_FOLDED.test(html) ? foldWhitespace(stripControls(html)) : html;
  // Titles with a word in bold or code: their text without an HTML parser (the same text, tested).
  const inline = inlineMarkupText(html);
  if (inline !== null) return foldWhitespace(stripControls(inline));
  return htmlToTextByParser(html);
}

/** htmlToText by htmlparser2 (what the quick paths of htmlToText are held to). */
export function htmlToTextByParser(html: string): string {
  if (html.includes('<!--')) html = closeOpenComments(html);
  const parts: string[] = [];
  let hidden = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        const local = localTag(name);
        if (HIDDEN.has(local)) hidden++;
        else if (BLOCK.has(local)) parts.push(' ');
      },
      onclosetag(name) {
        const local = localTag(name);
        if (HIDDEN.has(local)) hidden = Math.max(0, hidden - 1);
        else if (BLOCK.has(local)) parts.push(' ');
      },
      ontext(text) {
        if (hidden === 0) parts.push(text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return foldWhitespace(stripControls(parts.join('')));
}

/** Plain text → HTML that shows it (for a text summary or content stored in an HTML field). */
function textToHtml(text: string): string {
  if (!/[&<>]/.test(text)) return text;
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// C0 controls but tab, newline and carriage return: not in text.
// eslint-disable-next-line no-control-regex
const BINARY = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

/** Base64 → text; `strict`: null unless the bytes are UTF-8 text (for content of an unknown type, which may be an image). */
function decodeBase64(value: string, strict: boolean): string | null {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return null;
  const bytes = Buffer.from(compact, 'base64');
  if (!strict) return new TextDecoder('utf-8').decode(bytes);
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return BINARY.test(text) ? null : text;
  } catch {
    return null;
  }
}

/**
 * The kind of a construct's `type`: html for html/xhtml and (x)html MIME types, text for text and
 * other text/* types (and no type at all: Atom's default), null for anything else (another MIME type).
 */
function kindOf(type: string | null | undefined, fallback: 'html' | 'text'): 'html' | 'text' | null {
  const t = (type ?? '').trim().toLowerCase();
  if (!t) return fallback;
  if (t === 'html' || t === 'xhtml' || t === 'text/html' || t === 'application/xhtml+xml' || t.endsWith('+xml') || t === 'text/xml' || t === 'application/xml')
    return 'html';
  if (t === 'text' || t.startsWith('text/')) return 'text';
  return null;
}

/**
 * Decodes a text construct. `untyped` is how to read it when it carries no type: 'html' for RSS,
 * RDF and HTML-only fields, 'text' for Atom (whose default type is text).
 */
export function decodeTextConstruct(tc: TextConstruct | null | undefined, untyped: 'html' | 'text'): Decoded | null {
  if (!tc || typeof tc.value !== 'string') return null;
  const kind = kindOf(tc.type, untyped);
  // Another MIME type: Base64 whatever the mode says (Atom 1.0), text only if it decodes to text.
  const otherType = kind === null;
  let value: string | null = tc.value;
  if (otherType || (tc.mode ?? '').trim().toLowerCase() === 'base64') value = decodeBase64(value, otherType);
  if (value === null || !value.trim()) return null;
  return { kind: kind ?? 'html', value };
}

/** A title or an author name as plain text, or null when nothing is left. */
export function plainText(decoded: Decoded | null): string | null {
  if (!decoded) return null;
  // Declared plain text is read as HTML too: a title is shown as text everywhere, and a tag-like
  // sequence in one is far more often an injection or a mislabelled type than meant to be seen.
  const text = htmlToText(decoded.value);
  return text ? text.slice(0, MAX_TEXT_LENGTH) : null;
}

/** A summary or content as HTML (not yet sanitized), or null. */
export function htmlOf(decoded: Decoded | null): string | null {
  if (!decoded) return null;
  return decoded.kind === 'html' ? decoded.value : textToHtml(decoded.value);
}
