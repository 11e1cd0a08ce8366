/**
 * sanitize-html's output for HTML that its parser reads as written, computed in one pass without
 * sanitize-html. Pure: no I/O.
 *
 * Why: sanitize-html spends ~100-200 µs on a typical article (most of it set-up per call and per
 * tag), several times feedsmith's parse of the whole item. Feed content is mostly HTML a CMS wrote:
 * nested in order, attributes quoted, entities terminated.
 *
 * Invariant: for any input the result is null ("not handled": the caller runs sanitize-html) or
 * exactly the string sanitize-html returns for it with the same options and rewriting
 * (sanitize-fast-path.test.ts holds it to sanitize-html on the hostile and rich corpora, the
 * feed documents of the test fixtures and generated HTML). It handles the HTML that htmlparser2
 * (sanitize-html's parser, HTML mode) reads without repairs:
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
 * mode: allowed tags with the attributes they may keep, after the caller's rewriting (the URL
 * rewriting of sanitize-content.ts, which sanitize-html gets as tagTransform below), in their
 * order, with sanitize-html's checks (empty values, URL schemes, srcset, classes) and its
 * escaping; text escaped; nothing of the elements of nonTextTags. Those rules are compiled from
 * the options (sanitize-rules.ts), which refuses options it does not model (another mode,
 * filters, attribute globs, a style attribute, script or iframe allowed...), so that a policy
 * change cannot make the two drift apart unnoticed.
 *
 * How it stays cheap: the input is copied as it is wherever the output is the same (text without
 * references to decode, a tag written as sanitize-html writes it), so most of an article costs
 * one scan and a few slices; attribute names are matched against the few a tag may keep without
 * building a string; only the attributes kept are read and rewritten.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import type sanitizeHtml from 'sanitize-html';
import { compileRules, NAME_KEY_MASK, nameKeyStep, sameName, type AttributeRewriting, type TagInfo } from './sanitize-rules.js';
import { TAB, LF, FF, CR, SPACE, BANG, DQUOTE, HASH, SQUOTE, DASH, DOT, SLASH, COLON, SEMI, EQ, GT, QUESTION, UNDERSCORE } from './char-codes.js';

export type { AttributeRewriting } from './sanitize-rules.js';

/**
 * The caller's rewrite of one attribute of AttributeRewriting.attributes: its new value, or null
 * to drop it. A pure function of its arguments (the fast path calls it only for the attributes an
 * allowed tag keeps).
 */
export type RewriteAttribute = (tag: string, attribute: string, value: string) => string | null;

/** sanitize-html's output for `html`, or null when the fast path does not handle it. Not reentrant: `rewrite` must not call it. */
export type FastSanitizer = (html: string, rewrite: RewriteAttribute) => string | null;

/**
 * The transformTags['*'] function that makes sanitize-html rewrite attributes as the fast path
 * does: each attribute of `rewriting.attributes` through `rewrite` (dropped on null), then the
 * attributes of `rewriting.set` set (in place when the tag had one, else after the others).
 */
export function tagTransform(rewriting: AttributeRewriting, rewrite: RewriteAttribute): sanitizeHtml.Transformer {
  return (tagName, attribs) => {
    for (const attribute of rewriting.attributes) {
      const value = attribs[attribute];
      if (value === undefined) continue;
      const rewritten = rewrite(tagName, attribute, value);
      if (rewritten === null) delete attribs[attribute];
      else attribs[attribute] = rewritten;
    }
    const set = Object.hasOwn(rewriting.set, tagName) ? rewriting.set[tagName]! : null;
    if (set) for (const [attribute, value] of Object.entries(set)) attribs[attribute] = value;
    return { tagName, attribs };
  };
}

/** htmlparser2's whitespace. */
const isWs = (c: number) => c === SPACE || c === LF || c === TAB || c === FF || c === CR;
const isAlpha = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlnum = (c: number) => isAlpha(c) || isDigit(c);
const isAttrNameStart = (c: number) => isAlpha(c) || c === UNDERSCORE || c === COLON;
const isAttrNameChar = (c: number) => isAlnum(c) || c === UNDERSCORE || c === COLON || c === DASH || c === DOT;

// What References.in finds in a slice.
/** An `&` whose reference runs to the end of the slice: it could decode otherwise in the whole string. */
const NOT_ALONE = -1;
/** No `&`. */
const NONE = 0;
/** Only `&amp;`, `&lt;` and `&gt;`: as text, decoding and escaping again gives them back. */
const MARKUP_ONLY = 1;
/** References that decode the same from the slice alone as from the whole string. */
const DECODE = 2;

/** `&amp;`, `&lt;` or `&gt;`: s[from, to) is the name and s[to] the `;`. */
function isMarkupReference(s: string, from: number, to: number): boolean {
  if (to - from === 3) return s.charCodeAt(from) === 97 && s.charCodeAt(from + 1) === 109 && s.charCodeAt(from + 2) === 112;
  if (to - from !== 2 || s.charCodeAt(from + 1) !== 116) return false;
  const c = s.charCodeAt(from);
  return c === 108 || c === 103;
}

/** The ampersands of a string, visited in order; each part of the string is searched once. */
class References {
  /** The next `&` at or after the last position asked about (the string's length: none). */
  private next = -1;
  constructor(private readonly s: string) {}

  /**
   * What the `&`s of s[from, to) are (NONE, MARKUP_ONLY, DECODE or NOT_ALONE). A reference
   * decodes the same from the slice alone as from the whole string when the run of reference
   * characters after its `&` ends before `to`: the decoder then sees the character ending it in
   * both cases.
   */
  in(from: number, to: number): number {
    const s = this.s;
    if (this.next < from) this.next = indexOrEnd(s, '&', from);
    if (this.next >= to) return NONE;
    let found = MARKUP_ONLY;
    for (; this.next < to; this.next = indexOrEnd(s, '&', this.next + 1)) {
      const name = this.next + 1;
      let j = name;
      for (let c = s.charCodeAt(j); j < to && (isAlnum(c) || c === HASH); c = s.charCodeAt(++j));
      if (j >= to) return NOT_ALONE;
      if (found === MARKUP_ONLY && !(s.charCodeAt(j) === SEMI && isMarkupReference(s, name, j))) found = DECODE;
    }
    return found;
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
 * The fast path for `options` (sanitize-html options without transformTags) and the caller's
 * `rewriting` (the rewrite itself is given per call). Throws when the options use something not
 * modelled (sanitize-rules.ts).
 */
export function compileFastSanitizer(options: sanitizeHtml.IOptions, rewriting: AttributeRewriting): FastSanitizer {
  const rules = compileRules(options, rewriting);
  // The kept attributes of the start tag being read, in order: slot, value's bounds, decode.
  const slotOf = new Int32Array(rules.maxSlots);
  const valueFrom = new Int32Array(rules.maxSlots);
  const valueTo = new Int32Array(rules.maxSlots);
  const decodeValue = new Uint8Array(rules.maxSlots);

  /** True when the slot is among the first `kept` noted. */
  function noted(kept: number, slot: number): boolean {
    for (let k = 0; k < kept; k++) if (slotOf[k] === slot) return true;
    return false;
  }

  /** The start tag sanitize-html writes for `tag` with the `kept` attributes noted (built piece by piece: fewer strings). */
  function startTag(tag: TagInfo, html: string, kept: number, rewrite: RewriteAttribute): string | null {
    let written = tag.open;
    for (let k = 0; k < kept; k++) {
      const slot = tag.slots[slotOf[k]!]!;
      let value = slot.forced;
      if (value === null) {
        const raw = html.slice(valueFrom[k], valueTo[k]);
        value = decodeValue[k] ? decodeHTMLAttribute(raw) : raw;
        if (slot.rewrite) {
          value = rewrite(tag.name, slot.name, value);
          if (value === null) continue;
        }
      }
      const checked = rules.checkAttribute(slot, value);
      if (checked === null) return null;
      if (checked === undefined) continue;
      if (checked === '') written += slot.empty;
      else {
        written += slot.open;
        written += checked;
        written += '"';
      }
    }
    // The forced attributes the tag did not have come after the others.
    for (const forced of tag.forced) if (!noted(kept, forced.slot)) written += forced.written;
    return written + tag.close;
  }

  // The open elements (the sanitizer is not reentrant: one stack serves every call).
  const stack: TagInfo[] = [];

  return function sanitizeFastPath(html: string, rewrite: RewriteAttribute): string | null {
    const n = html.length;
    const references = new References(html);
    stack.length = 0;
    // The output is `out` followed by the input from `from` on, up to where the reading is:
    // input is copied only when something different has to be written after it.
    let out = '';
    let from = 0;
    /** sanitize-html's skipTextDepth: > 0 inside an element of nonTextTags. */
    let skip = 0;
    /** Where the outermost element being dropped with its content starts. */
    let skipFrom = 0;
    /** The next `>` at or after the text being looked at. */
    let gt = -1;

    let i = 0;
    while (i < n) {
      const lt = html.indexOf('<', i);
      const end = lt === -1 ? n : lt;
      if (end > i && skip === 0) {
        const found = references.in(i, end);
        if (found === NOT_ALONE) return null;
        if (found === DECODE) {
          out += html.slice(from, i) + escapeText(decodeHTML(html.slice(i, end)));
          from = end;
        } else {
          // Without a reference to decode, only a `>` needs escaping.
          if (gt < i) gt = indexOrEnd(html, '>', i);
          if (gt < end) {
            out += html.slice(from, i) + html.slice(i, end).replace(/>/g, '&gt;');
            from = end;
          }
        }
      }
      if (lt === -1) break;
      const c = html.charCodeAt(lt + 1);

      if (c === BANG) {
        // A comment: htmlparser2 ends it at the first `-->`, the opening `--` counting (`<!-->`).
        if (!html.startsWith('<!--', lt)) return null;
        const endComment = html.indexOf('-->', lt + 2);
        if (endComment === -1) return null;
        i = endComment + 3;
        if (skip === 0) {
          out += html.slice(from, lt);
          from = i;
        }
        continue;
      }

      if (c === SLASH) {
        let j = lt + 2;
        if (!isAlpha(html.charCodeAt(j))) return null;
        let upper = false;
        for (let d = html.charCodeAt(j); isAlnum(d); d = html.charCodeAt(++j)) if (d <= 90 && d >= 65) upper = true;
        if (html.charCodeAt(j) !== GT) return null;
        const top = stack[stack.length - 1];
        if (top === undefined || !sameName(html, lt + 2, j, top.name)) return null;
        stack.pop();
        i = j + 1;
        if (skip > 0) {
          if (--skip === 0) {
            out += html.slice(from, skipFrom);
            from = i;
          }
        } else if (top.endTag === '' || upper) {
          // A dropped element, or its end tag written in upper case.
          out += html.slice(from, lt) + top.endTag;
          from = i;
        }
        continue;
      }

      if (!isAlpha(c)) {
        if (Number.isNaN(c) || c === QUESTION) return null;
        // A `<` that starts no tag is text.
        if (skip === 0) {
          out += html.slice(from, lt) + '&lt;';
          from = lt + 1;
        }
        i = lt + 1;
        continue;
      }

      // A start tag: its name, hashed as it is read (nameKeyStep).
      let j = lt + 1;
      let key = 0;
      let upper = false;
      for (let d = c; isAlnum(d); d = html.charCodeAt(++j)) {
        key = nameKeyStep(key, d);
        if (d <= 90 && d >= 65) upper = true;
      }
      const nameEnd = j;
      const tag = rules.tagAt(html, lt + 1, j, key & NAME_KEY_MASK);
      if (tag.foreign) return null;
      // Only an allowed tag's attributes are written, and only outside a dropped element: only
      // those it may keep are noted.
      const keep = tag.allowed && skip === 0;
      let kept = 0;
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
        const attrStart = j;
        if (!isAttrNameStart(e)) return null;
        while (isAttrNameChar(html.charCodeAt(j))) j++;
        const after = html.charCodeAt(j);
        if (!isWs(after) && after !== EQ && after !== SLASH && after !== GT) return null;
        const attrEnd = j;
        // The value: html[start, stop), empty when there is none.
        let start = 0;
        let stop = 0;
        let found = NONE;
        let k = j;
        while (isWs(html.charCodeAt(k))) k++;
        if (html.charCodeAt(k) === EQ) {
          k++;
          while (isWs(html.charCodeAt(k))) k++;
          const q = html.charCodeAt(k);
          if (q === DQUOTE || q === SQUOTE) {
            start = k + 1;
            stop = html.indexOf(q === DQUOTE ? '"' : "'", start);
            if (stop === -1) return null;
            j = stop + 1;
          } else {
            start = k;
            stop = k;
            while (stop < n && !isWs(html.charCodeAt(stop)) && html.charCodeAt(stop) !== GT) stop++;
            if (stop >= n) return null;
            j = stop;
          }
          found = references.in(start, stop);
          if (found === NOT_ALONE) return null;
        }
        if (keep) {
          // htmlparser2 keeps the first of two attributes of one name (names are case folded).
          const slot = slotNamed(tag, html, attrStart, attrEnd);
          if (slot !== -1 && !noted(kept, slot)) {
            slotOf[kept] = slot;
            valueFrom[kept] = start;
            valueTo[kept] = stop;
            decodeValue[kept++] = found === NONE ? 0 : 1;
          }
        }
      }
      const tagEnd = j + 1;

      const top = stack[stack.length - 1];
      if (tag.closes !== null && top !== undefined && tag.closes.has(top.name)) return null;
      if (!tag.isVoid) stack.push(tag);
      if (skip > 0) skip++;
      else if (tag.allowed) {
        if (!(kept === 0 && tag.plainStart && !upper && tagEnd === nameEnd + 1 && !tag.isVoid)) {
          let written = kept === 0 ? tag.bareTag : startTag(tag, html, kept, rewrite);
          if (written === null) return null;
          // A void element's end tag is implied at once.
          if (tag.isVoid) written += tag.endTag;
          if (written.length !== tagEnd - lt || !html.startsWith(written, lt)) {
            out += html.slice(from, lt) + written;
            from = tagEnd;
          }
        }
      } else if (tag.nonText) {
        skip = 1;
        skipFrom = lt;
      } else {
        out += html.slice(from, lt);
        from = tagEnd;
      }
      i = tagEnd;
      if (tag.isVoid) {
        if (skip > 0 && --skip === 0) {
          out += html.slice(from, skipFrom);
          from = tagEnd;
        }
      } else if (tag.rawText) {
        // Its content is raw text up to `</name` (any case), which must end right there with `>`.
        // A raw text element is never allowed and always dropped with its content: skip > 0.
        const endTag = rawTextEnd(html, tagEnd, tag.name);
        if (endTag === -1) return null;
        stack.pop();
        i = endTag;
        if (--skip === 0) {
          out += html.slice(from, skipFrom);
          from = i;
        }
      }
    }
    if (stack.length !== 0) return null;
    return from === 0 ? html : out + html.slice(from);
  };
}

/** The index of the slot of `tag` named html[from, to) (any case), or -1. */
function slotNamed(tag: TagInfo, html: string, from: number, to: number): number {
  const slots = tag.slots;
  for (let s = 0; s < slots.length; s++) if (sameName(html, from, to, slots[s]!.name)) return s;
  return -1;
}

/** The index after `</name>` closing the raw text that starts at `from`, or -1 (not found, or not ended by `>` at once). */
function rawTextEnd(html: string, from: number, name: string): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (!sameName(html, at + 2, at + 2 + name.length, name)) continue;
    return html.charCodeAt(at + 2 + name.length) === GT ? at + 3 + name.length : -1;
  }
  return -1;
}
