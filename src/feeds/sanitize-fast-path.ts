/**
 * sanitize-html's output for HTML that its parser reads as written, computed in one pass without
 * sanitize-html. Pure: no I/O.
 *
 * Why: sanitize-html spends ~100-200 µs on a typical article (most of it set-up per call and per
 * tag), several times feedsmith's parse of the whole item. Feed content is mostly HTML a CMS wrote:
 * nested in order, attributes quoted, entities terminated.
 *
 * Invariant: for any input the result is null ("not handled": the caller runs sanitize-html) or
 * exactly the string sanitize-html returns for it with the same options and transform
 * (sanitize-fast-path.test.ts holds it to sanitize-html on the hostile and rich corpora and on
 * generated HTML). It handles the HTML that htmlparser2 (sanitize-html's parser, HTML mode) reads
 * without repairs:
 * - start tags `<name attr="v" attr='v' attr=v attr>` and end tags `</name>`, ASCII names;
 * - every element closed by its own end tag, in order (void elements need none, and may be
 *   written `<br/>`), and none that htmlparser2 closes by itself when another opens (a `<p>` in a
 *   `<p>`, an `<li>` in an `<li>`, a `<td>` in a `<td>`...);
 * - text and attribute values whose every `&` is decoded by the entities package as htmlparser2
 *   decodes it (the character after the reference is in the same text or value);
 * - comments; the content of script, style, title, textarea and xmp up to their end tag;
 * - no svg or math (foreign content changes how htmlparser2 reads tags).
 * Anything else (a stray end tag, an unclosed element, a `<?`, a `<!DOCTYPE`, an unquoted `&` at
 * the end of a text before a tag...) returns null.
 *
 * What it writes follows sanitize-html's rules for the options it is compiled from, in discard
 * mode: allowed tags with the attributes they may keep, after the transformTags '*' function (the
 * URL rewriting of sanitize-content.ts), in their order, with sanitize-html's checks (empty values,
 * URL schemes, srcset, classes) and its escaping; text escaped; nothing of the elements of
 * nonTextTags. Those rules are compiled from the options (sanitize-rules.ts), which refuses
 * options it does not model (another mode, filters, attribute globs, a style attribute, script or
 * iframe allowed...), so that a policy change cannot make the two drift apart unnoticed.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import type sanitizeHtml from 'sanitize-html';
import { compileRules, sameName, type TagInfo } from './sanitize-rules.js';

/** The transformTags['*'] function sanitize-html would be given. */
export type TagTransform = (tagName: string, attribs: sanitizeHtml.Attributes) => sanitizeHtml.Tag;
// The fast path gives the transform only the attributes the tag may keep, and calls it once a call
// for a tag without attributes: it must be a pure function that treats each attribute on its own
// (as sanitize-content.ts's URL rewriting does), not read one to set another.
export type FastSanitizer = (html: string, transform: TagTransform) => string | null;

const TAB = 9;
const LF = 10;
const FF = 12;
const CR = 13;
const SPACE = 32;
const BANG = 33;
const DQUOTE = 34;
const HASH = 35;
const SQUOTE = 39;
const DASH = 45;
const DOT = 46;
const SLASH = 47;
const COLON = 58;
const EQ = 61;
const GT = 62;
const QUESTION = 63;
const UNDERSCORE = 95;

/** htmlparser2's whitespace. */
const isWs = (c: number) => c === SPACE || c === LF || c === TAB || c === FF || c === CR;
const isAlpha = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlnum = (c: number) => isAlpha(c) || isDigit(c);
const isAttrNameStart = (c: number) => isAlpha(c) || c === UNDERSCORE || c === COLON;
const isAttrNameChar = (c: number) => isAlnum(c) || c === UNDERSCORE || c === COLON || c === DASH || c === DOT;

/** The ampersands of a string, visited in order; each part of the string is searched once. */
class Ampersands {
  /** The next `&` at or after the last position asked about (the string's length: none). */
  private next = -1;
  constructor(private readonly s: string) {}

  /**
   * 'none' when s[from, to) holds no `&`; 'alone' when each `&` in it decodes the same from that
   * slice alone as from the whole string (the run of reference characters after it ends before
   * `to`, so the decoder sees the character ending it in both cases); 'no' otherwise.
   */
  in(from: number, to: number): 'none' | 'alone' | 'no' {
    const s = this.s;
    if (this.next < from) this.next = indexOrEnd(s, '&', from);
    if (this.next >= to) return 'none';
    for (; this.next < to; this.next = indexOrEnd(s, '&', this.next + 1)) {
      let j = this.next + 1;
      while (j < to && (isAlnum(s.charCodeAt(j)) || s.charCodeAt(j) === HASH)) j++;
      if (j >= to) return 'no';
    }
    return 'alone';
  }
}

function indexOrEnd(s: string, search: string, from: number): number {
  const at = s.indexOf(search, from);
  return at === -1 ? s.length : at;
}

function escapeText(s: string): string {
  if (!/[&<>]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The fast path for `options` (sanitize-html options without transformTags: the transform is
 * given per call). Throws when the options use something not modelled (sanitize-rules.ts).
 */
export function compileFastSanitizer(options: sanitizeHtml.IOptions): FastSanitizer {
  const rules = compileRules(options);

  return function sanitizeFastPath(html: string, transform: TagTransform): string | null {
    const n = html.length;
    const ampersands = new Ampersands(html);
    const stack: TagInfo[] = [];
    let out = '';
    /** sanitize-html's skipTextDepth: > 0 inside an element of nonTextTags. */
    let skip = 0;

    const close = (tag: TagInfo) => {
      if (skip > 0) skip--;
      else if (tag.allowed && !tag.selfClosing) out += `</${tag.name}>`;
    };

    let i = 0;
    while (i < n) {
      const lt = html.indexOf('<', i);
      const end = lt === -1 ? n : lt;
      if (end > i && skip === 0) {
        const amps = ampersands.in(i, end);
        if (amps === 'no') return null;
        const text = html.slice(i, end);
        // Without a reference the text holds no `&` or `<`: only a `>` may need escaping.
        out += amps === 'alone' ? escapeText(decodeHTML(text)) : text.includes('>') ? text.replace(/>/g, '&gt;') : text;
      }
      if (lt === -1) break;
      const c = html.charCodeAt(lt + 1);

      if (c === BANG) {
        // A comment: htmlparser2 ends it at the first `-->`, the opening `--` counting (`<!-->`).
        if (!html.startsWith('<!--', lt)) return null;
        const endComment = html.indexOf('-->', lt + 2);
        if (endComment === -1) return null;
        i = endComment + 3;
        continue;
      }

      if (c === SLASH) {
        let j = lt + 2;
        if (!isAlpha(html.charCodeAt(j))) return null;
        while (isAlnum(html.charCodeAt(j))) j++;
        if (html.charCodeAt(j) !== GT) return null;
        const top = stack[stack.length - 1];
        if (!top || top.isVoid) return null;
        if (!sameName(html, lt + 2, j, top.name)) return null;
        stack.pop();
        close(top);
        i = j + 1;
        continue;
      }

      if (!isAlpha(c)) {
        if (Number.isNaN(c) || c === QUESTION) return null;
        // A `<` that starts no tag is text.
        if (skip === 0) out += '&lt;';
        i = lt + 1;
        continue;
      }

      // A start tag.
      let j = lt + 2;
      while (isAlnum(html.charCodeAt(j))) j++;
      const tag = rules.tagAt(html, lt + 1, j);
      if (tag.foreign) return null;
      // Only an allowed tag's attributes are written, and only outside a dropped element: only
      // those it may keep are read (the transform sees no other).
      const keep = tag.allowed && skip === 0;
      let attribs: sanitizeHtml.Attributes | null = null;
      for (;;) {
        const d = html.charCodeAt(j);
        if (d === GT) break;
        if (d === SLASH) {
          if (!tag.isVoid || html.charCodeAt(j + 1) !== GT) return null;
          j++;
          break;
        }
        if (!isWs(d)) return null;
        while (isWs(html.charCodeAt(j))) j++;
        const e = html.charCodeAt(j);
        if (e === GT || e === SLASH) continue;
        // An attribute: its name, then maybe `=` and a value.
        const nameStart = j;
        if (!isAttrNameStart(e)) return null;
        while (isAttrNameChar(html.charCodeAt(j))) j++;
        const after = html.charCodeAt(j);
        if (!isWs(after) && after !== EQ && after !== SLASH && after !== GT) return null;
        const nameEnd = j;
        // The value: s[valueFrom, valueTo), empty when there is none.
        let valueFrom = 0;
        let valueTo = 0;
        let decode = false;
        let k = j;
        while (isWs(html.charCodeAt(k))) k++;
        if (html.charCodeAt(k) === EQ) {
          k++;
          while (isWs(html.charCodeAt(k))) k++;
          const q = html.charCodeAt(k);
          let from: number;
          let to: number;
          if (q === DQUOTE || q === SQUOTE) {
            from = k + 1;
            to = html.indexOf(q === DQUOTE ? '"' : "'", from);
            if (to === -1) return null;
            j = to + 1;
          } else {
            from = k;
            to = k;
            while (to < n && !isWs(html.charCodeAt(to)) && html.charCodeAt(to) !== GT) to++;
            if (to >= n) return null;
            j = to;
          }
          const amps = ampersands.in(from, to);
          if (amps === 'no') return null;
          valueFrom = from;
          valueTo = to;
          decode = amps === 'alone';
        }
        if (keep) {
          const attrName = html.slice(nameStart, nameEnd).toLowerCase();
          if (tag.rules.has(attrName) && !(attribs && Object.hasOwn(attribs, attrName))) {
            attribs ??= {};
            const raw = html.slice(valueFrom, valueTo);
            attribs[attrName] = decode ? decodeHTMLAttribute(raw) : raw;
          }
        }
      }
      const tagEnd = j + 1;

      const top = stack[stack.length - 1];
      if (tag.closes && top && tag.closes.has(top.name)) return null;
      if (!tag.isVoid) stack.push(tag);
      if (skip > 0) skip++;
      else if (tag.allowed) {
        // Without attributes, a tag is transformed once a call (the transform is a pure function).
        let startTag = attribs === null && tag.bareFor === transform ? tag.bare : null;
        if (startTag === null) {
          const transformed = transform(tag.name, attribs ?? {});
          if (transformed.tagName !== tag.name) return null;
          const written = rules.writeAttributes(tag, transformed.attribs);
          if (written === null) return null;
          startTag = `<${tag.name}${written}${tag.selfClosing ? ' />' : '>'}`;
          if (attribs === null) {
            tag.bareFor = transform;
            tag.bare = startTag;
          }
        }
        out += startTag;
      } else if (tag.nonText) skip = 1;
      if (tag.isVoid) close(tag);

      i = tagEnd;
      if (tag.rawText) {
        // Its content is raw text up to `</name` (any case), which must end right there with `>`.
        const endTag = rawTextEnd(html, tagEnd, tag.name);
        if (endTag === -1) return null;
        stack.pop();
        close(tag);
        i = endTag;
      }
    }
    return stack.length === 0 ? out : null;
  };
}

/** The index after `</name>` closing the raw text that starts at `from`, or -1 (not found, or not ended by `>` at once). */
function rawTextEnd(html: string, from: number, name: string): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (html.slice(at + 2, at + 2 + name.length).toLowerCase() !== name) continue;
    return html.charCodeAt(at + 2 + name.length) === GT ? at + 3 + name.length : -1;
  }
  return -1;
}
