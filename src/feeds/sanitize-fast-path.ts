/**
 * sanitize-html's output for HTML that its parser reads as written, computed in one pass without
 * sanitize-html. Pure: no I/O.
 *
 * Why: sanitize-html spends ~100-200 µs on a typical article (most of it set-up per call and per
 * tag), several times feedsmith's parse of the whole item. Feed content is mostly HTML a CMS wrote:
 * nested in order, attributes quoted, entities terminated.
 *
 * Invariant: for any input the result is null ("not handled": the caller runs sanitize-html) or
 * exactly the string sanitize-html returns for it with the same options and rewriting, without
 * the control characters stripControls removes (which the caller removes from sanitize-html's
 * answer too) (sanitize-fast-path.test.ts holds it to sanitize-html on the hostile and rich corpora, the
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
 * one scan and a few slices; it reads code units from a typed array (code-units.ts), text in one
 * pass that notes a `>`, an `&` or a control character; attribute names are matched against the
 * few a tag may keep without building a string; only the attributes kept are read and rewritten;
 * control characters are looked for only where they can come from (text, values kept, decoded
 * references), not in the whole output again.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import type sanitizeHtml from 'sanitize-html';
import { codeUnitsReader } from './code-units.js';
import { hasControls, stripControls } from './text-construct.js';
import { compileRules, NAME_KEY_MASK, nameKeyStep, sameName, type AttributeRewriting, type TagInfo } from './sanitize-rules.js';
import { TAB, LF, FF, CR, SPACE, AMP, BANG, DEL, DQUOTE, HASH, SQUOTE, DASH, DOT, SLASH, COLON, SEMI, EQ, GT, LT, QUESTION, UNDERSCORE } from './char-codes.js';

export type { AttributeRewriting } from './sanitize-rules.js';

/**
 * The caller's rewrite of one attribute of AttributeRewriting.attributes: its new value, or null
 * to drop it. A pure function of its arguments (the fast path calls it only for the attributes an
 * allowed tag keeps) that adds no control character (stripControls) its value did not hold.
 */
export type RewriteAttribute = (tag: string, attribute: string, value: string) => string | null;

/**
 * sanitize-html's output for `html` without control characters (stripControls), or null when the
 * fast path does not handle it. `units`: html's code units when the caller has read them
 * (codeUnitsReader; valid for the call), else they are read here. Not reentrant: `rewrite` must
 * not call it.
 */
export type FastSanitizer = (html: string, rewrite: RewriteAttribute, units?: Uint16Array) => string | null;

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
/** A character stripControls removes: C0 controls but tab, line feed and carriage return, and DEL. */
const isControl = (c: number) => (c < SPACE && c !== TAB && c !== LF && c !== CR) || c === DEL;
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

/** `&amp;`, `&lt;` or `&gt;`: units[from, to) are the name and units[to] the `;`. */
function isMarkupReference(units: Uint16Array, from: number, to: number): boolean {
  if (to - from === 3) return units[from] === 97 && units[from + 1] === 109 && units[from + 2] === 112;
  if (to - from !== 2 || units[from + 1] !== 116) return false;
  const c = units[from];
  return c === 108 || c === 103;
}

/** The ampersands of a string, visited in order; each part of the string is searched once. */
class References {
  /** The next `&` at or after the last position asked about (the string's length: none). */
  private next = -1;
  /** `units` are the code units of `s` (codeUnitsReader). */
  constructor(
    private readonly s: string,
    private readonly units: Uint16Array,
  ) {}

  /**
   * What the `&`s of s[from, to) are (NONE, MARKUP_ONLY, DECODE or NOT_ALONE). A reference
   * decodes the same from the slice alone as from the whole string when the run of reference
   * characters after its `&` ends before `to`: the decoder then sees the character ending it in
   * both cases.
   */
  in(from: number, to: number): number {
    const s = this.s;
    const units = this.units;
    if (this.next < from) this.next = indexOrEnd(s, '&', from);
    if (this.next >= to) return NONE;
    let found = MARKUP_ONLY;
    for (; this.next < to; this.next = indexOrEnd(s, '&', this.next + 1)) {
      const name = this.next + 1;
      let j = name;
      for (let c = units[j]!; j < to && (isAlnum(c) || c === HASH); c = units[++j]!);
      if (j >= to) return NOT_ALONE;
      if (found === MARKUP_ONLY && !(units[j] === SEMI && isMarkupReference(units, name, j))) found = DECODE;
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
  // The input is read as code units, not through charCodeAt (code-units.ts).
  const readUnits = codeUnitsReader();
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
  function startTag(tag: TagInfo, html: string, units: Uint16Array, kept: number, rewrite: RewriteAttribute): string | null {
    let written = tag.open;
    for (let k = 0; k < kept; k++) {
      const slot = tag.slots[slotOf[k]!]!;
      let value = slot.forced;
      if (value === null) {
        const raw = html.slice(valueFrom[k], valueTo[k]);
        // Neither the rewrite nor the checks below add a control character: only the value can hold one.
        if (decodeValue[k]) {
          value = decodeHTMLAttribute(raw);
          if (hasControls(value)) controls = true;
        } else {
          value = raw;
          if (!controls && unitsHaveControls(units, valueFrom[k]!, valueTo[k]!)) controls = true;
        }
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
  /** The output may hold a control character (stripControls): one was read in text, or written in a value or decoded text. */
  let controls = false;

  return function sanitizeFastPath(html: string, rewrite: RewriteAttribute, unitsRead?: Uint16Array): string | null {
    const n = html.length;
    const units = unitsRead ?? readUnits(html);
    const references = new References(html, units);
    stack.length = 0;
    controls = false;
    // The output is `out` followed by the input from `from` on, up to where the reading is:
    // input is copied only when something different has to be written after it.
    let out = '';
    let from = 0;
    /** sanitize-html's skipTextDepth: > 0 inside an element of nonTextTags. */
    let skip = 0;
    /** Where the outermost element being dropped with its content starts. */
    let skipFrom = 0;

    let i = 0;
    while (i < n) {
      // The text up to the next `<`, read in one pass that notes whether it holds a `>` or an `&`
      // (cheaper than searching for each: most text is short, between two tags).
      let end = i;
      let gt = false;
      let amp = false;
      for (; end < n; end++) {
        const d = units[end]!;
        if (d > GT) {
          if (d === DEL) controls = true;
          continue;
        }
        if (d === LT) break;
        if (d === GT) gt = true;
        else if (d === AMP) amp = true;
        else if (isControl(d)) controls = true;
      }
      const lt = end === n ? -1 : end;
      if (end > i && skip === 0) {
        const found = amp ? references.in(i, end) : NONE;
        if (found === NOT_ALONE) return null;
        if (found === DECODE) {
          const text = escapeText(decodeHTML(html.slice(i, end)));
          if (hasControls(text)) controls = true;
          out += html.slice(from, i) + text;
          from = end;
        } else if (gt) {
          // Without a reference to decode, only a `>` needs escaping.
          out += html.slice(from, i) + html.slice(i, end).replace(/>/g, '&gt;');
          from = end;
        }
      }
      if (lt === -1) break;
      const c = units[lt + 1]!;

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
        if (!isAlpha(units[j]!)) return null;
        let upper = false;
        for (let d = units[j]!; isAlnum(d); d = units[++j]!) if (d <= 90 && d >= 65) upper = true;
        if (units[j] !== GT) return null;
        const top = stack[stack.length - 1];
        if (top === undefined || !sameName(units, lt + 2, j, top.units)) return null;
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
        if (lt + 1 === n || c === QUESTION) return null;
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
      for (let d = c; isAlnum(d); d = units[++j]!) {
        key = nameKeyStep(key, d);
        if (d <= 90 && d >= 65) upper = true;
      }
      const nameEnd = j;
      const tag = rules.tagAt(html, units, lt + 1, j, key & NAME_KEY_MASK);
      if (tag.foreign) return null;
      // Only an allowed tag's attributes are written, and only outside a dropped element: only
      // those it may keep are noted.
      const keep = tag.allowed && skip === 0;
      let kept = 0;
      for (;;) {
        const d = units[j]!;
        if (d === GT) break;
        if (d === SLASH) {
          if (!tag.isVoid || units[j + 1] !== GT) return null;
          j++;
          break;
        }
        if (!isWs(d)) return null;
        while (isWs(units[j]!)) j++;
        const e = units[j]!;
        if (e === GT || e === SLASH) continue;
        // An attribute: its name, then maybe `=` and a value.
        const attrStart = j;
        if (!isAttrNameStart(e)) return null;
        let attrKey = 0;
        for (let d = e; isAttrNameChar(d); d = units[++j]!) attrKey = nameKeyStep(attrKey, d);
        const after = units[j]!;
        if (!isWs(after) && after !== EQ && after !== SLASH && after !== GT) return null;
        const attrEnd = j;
        // The value: html[start, stop), empty when there is none.
        let start = 0;
        let stop = 0;
        let found = NONE;
        let k = j;
        while (isWs(units[k]!)) k++;
        if (units[k] === EQ) {
          k++;
          while (isWs(units[k]!)) k++;
          const q = units[k]!;
          if (q === DQUOTE || q === SQUOTE) {
            start = k + 1;
            stop = html.indexOf(q === DQUOTE ? '"' : "'", start);
            if (stop === -1) return null;
            j = stop + 1;
          } else {
            start = k;
            stop = k;
            while (stop < n && !isWs(units[stop]!) && units[stop] !== GT) stop++;
            if (stop >= n) return null;
            j = stop;
          }
          found = references.in(start, stop);
          if (found === NOT_ALONE) return null;
        }
        if (keep) {
          // htmlparser2 keeps the first of two attributes of one name (names are case folded).
          const slot = slotNamed(tag, units, attrStart, attrEnd, attrKey & NAME_KEY_MASK);
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
          let written = kept === 0 ? tag.bareTag : startTag(tag, html, units, kept, rewrite);
          if (written === null) return null;
          // A void element's end tag is implied at once.
          if (tag.isVoid) written += tag.endTag;
          if (written.length !== tagEnd - lt || written !== html.slice(lt, tagEnd)) {
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
        const endTag = rawTextEnd(html, units, tagEnd, tag.units);
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
    const clean = from === 0 ? html : out + html.slice(from);
    return controls ? stripControls(clean) : clean;
  };
}

/** True when units[from, to) hold a control character (stripControls). */
function unitsHaveControls(units: Uint16Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (isControl(units[i]!)) return true;
  return false;
}

/** The index of the slot of `tag` named units[from, to) (any case), of nameKey `key`, or -1. */
function slotNamed(tag: TagInfo, units: Uint16Array, from: number, to: number, key: number): number {
  const slots = tag.slots;
  for (let s = 0; s < slots.length; s++) if (slots[s]!.key === key && sameName(units, from, to, slots[s]!.units)) return s;
  return -1;
}

/**
 * The index after `</name>` closing the raw text that starts at `from`, or -1 (not found, or not
 * ended by `>` at once). `units` are html's code units, `name` the name's.
 */
function rawTextEnd(html: string, units: Uint16Array, from: number, name: Uint16Array): number {
  const after = name.length + 2;
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (at + after >= html.length) return -1;
    if (!sameName(units, at + 2, at + after, name)) continue;
    return units[at + after] === GT ? at + after + 1 : -1;
  }
  return -1;
}
