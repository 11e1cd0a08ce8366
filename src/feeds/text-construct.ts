/**
 * Feed text → what is stored: titles and authors as plain text, summaries and content as HTML
 * (sanitized afterwards, sanitize-content.ts). Pure: no I/O.
 *
 * An Atom text construct says what it holds: `type` text / html / xhtml (Atom 1.0) or a MIME type
 * (Atom 0.3: text/plain, text/html, application/xhtml+xml), and in Atom 0.3 a `mode`: xml (inline,
 * the default), escaped (entity-escaped markup, what feedsmith already unescaped) or base64.
 * RSS and RDF elements carry no type: their titles and descriptions are read as HTML, as feed
 * readers do (plain text reads the same as HTML unless it holds markup or entities).
 * A construct of another MIME type (an image in base64, say) is not text: dropped.
 *
 * Plain text: markup stripped, entities decoded, whitespace folded to single spaces, control
 * characters removed (PostgreSQL refuses U+0000 in text), at most MAX_TEXT_LENGTH characters.
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

/** Removes characters that PostgreSQL text or an HTML reader cannot take. */
export function stripControls(value: string): string {
  return value.replace(CONTROL, '');
}

/** Whitespace runs → one space, trimmed. */
function foldWhitespace(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

// Elements whose text is not text a reader sees.
const HIDDEN = new Set(['script', 'style', 'template', 'noscript', 'iframe', 'object', 'svg', 'math', 'head', 'title', 'textarea', 'select']);
// Elements that separate words when rendered.
const BLOCK = new Set(['br', 'p', 'div', 'li', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr', 'dt', 'dd']);

/** HTML → the text a reader would see: tags dropped (with the content of script/style/...), entities decoded, whitespace folded. */
export function htmlToText(html: string): string {
  if (!/[<&]/.test(html)) return foldWhitespace(stripControls(html));
  const parts: string[] = [];
  let hidden = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (HIDDEN.has(name)) hidden++;
        else if (BLOCK.has(name)) parts.push(' ');
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        else if (BLOCK.has(name)) parts.push(' ');
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
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decodeBase64(value: string): string | null {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return null;
  return new TextDecoder('utf-8').decode(Buffer.from(compact, 'base64'));
}

/**
 * The kind of a construct's `type`: html for html/xhtml and (x)html MIME types, text for text and
 * other text/* types (and no type at all: Atom's default), null for anything else.
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
  if (!kind) return null;
  let value: string | null = tc.value;
  if ((tc.mode ?? '').trim().toLowerCase() === 'base64') value = decodeBase64(value);
  if (value === null || !value.trim()) return null;
  return { kind, value };
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
