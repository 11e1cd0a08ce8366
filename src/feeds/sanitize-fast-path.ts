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
 * nonTextTags. compileFastSanitizer refuses options it does not model (another mode, filters,
 * attribute globs, a style attribute, script or iframe allowed...), so that a policy change cannot
 * make the two drift apart unnoticed.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import sanitizeHtml from 'sanitize-html';

/** The transformTags['*'] function sanitize-html would be given. */
export type TagTransform = (tagName: string, attribs: sanitizeHtml.Attributes) => sanitizeHtml.Tag;
// The fast path gives the transform only the attributes the tag may keep: it must treat each
// attribute on its own (as sanitize-content.ts's URL rewriting does), not read one to set another.
export type FastSanitizer = (html: string, transform: TagTransform) => string | null;

// htmlparser2 10's Parser: opening the key closes an open element of the set on top of the stack.
const P = new Set(['p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ...['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((t): [string, Set<string>] => [t, P]),
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t): [string, Set<string>] => [t, FORM]),
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', new Set(['dd', 'dt'])],
  ['dt', new Set(['dd', 'dt'])],
  ...['address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'header', 'hr', 'main', 'nav', 'ol', 'pre', 'section', 'table', 'ul'].map(
    (t): [string, Set<string>] => [t, P],
  ),
  ['rt', new Set(['rt', 'rp'])],
  ['rp', new Set(['rt', 'rp'])],
  ['tbody', new Set(['thead', 'tbody'])],
  ['tfoot', new Set(['thead', 'tbody'])],
]);
// htmlparser2 10's void elements: an implied end tag follows the start tag.
export const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
/** htmlparser2's tokenizer reads these as raw text up to their end tag. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp']);
/** Foreign content: htmlparser2 honours `/>` inside, which this module does not model. */
const FOREIGN = new Set(['svg', 'math']);

const TAB = 9;
const LF = 10;
const FF = 12;
const CR = 13;
const SPACE = 32;
const BANG = 33;
const DQUOTE = 34;
const HASH = 35;
const AMP = 38;
const SQUOTE = 39;
const DASH = 45;
const DOT = 46;
const SLASH = 47;
const COLON = 58;
const LT = 60;
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

function escapeAttribute(s: string): string {
  if (!/[&<>"]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** launder 1.7's naughtyHref, which sanitize-html applies to URL attributes. */
function naughtyHref(href: string, allowedSchemes: readonly string[], allowProtocolRelative: boolean): boolean {
  // eslint-disable-next-line no-control-regex
  href = href.replace(/[\x00-\x20]+/g, '');
  for (;;) {
    const first = href.indexOf('<!--');
    if (first === -1) break;
    const last = href.indexOf('-->', first + 4);
    if (last === -1) break;
    href = href.substring(0, first) + href.substring(last + 3);
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9.\-+]*):/.exec(href);
  if (!scheme) return /^[/\\]{2}/.test(href) ? !allowProtocolRelative : false;
  return !allowedSchemes.includes(scheme[1]!.toLowerCase());
}

// A srcset candidate that parse-srcset reads back and sanitize-html writes out unchanged: a URL
// without whitespace or comma, and at most one descriptor written as JavaScript writes the number.
const CANONICAL_CANDIDATE = /^([^\s,]+)(?: (?:[1-9]\d{0,8}w|(?:[1-9]\d{0,8}|0(?=\.))(?:\.\d{0,8}[1-9])?x))?$/;

/** A glob of sanitize-html's allowedClasses (`language-*`) as the regular expression it builds. */
function globRegExp(globs: string[]): RegExp | null {
  if (!globs.length) return null;
  const escaped = globs.map((g) => g.replace(/[|\\{}()[\]^$+?.-]/g, '\\$&').replace(/\*/g, '.*'));
  return new RegExp(`^(${escaped.join('|')})$`);
}

/**
 * A number that stands for the tag name s[from, to), case folded, so that a tag is looked up
 * without building its name (a small integer hash; the name is compared too, sameName). The
 * caller has checked that the characters are ASCII letters and digits.
 */
function nameKey(s: string, from: number, to: number): number {
  let key = to - from;
  for (let i = from; i < to; i++) key = (Math.imul(key, 31) + (s.charCodeAt(i) | 0x20)) | 0;
  return key & 0x3fffffff;
}

/** True when s[from, to), case folded, is `name` (lower case letters and digits). */
function sameName(s: string, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if ((s.charCodeAt(from + i) | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}

function refuse(reason: string): never {
  throw new Error(`compileFastSanitizer: ${reason}`);
}

/**
 * The fast path for `options` (sanitize-html options without transformTags: the transform is
 * given per call). Throws when the options use something this module does not model.
 */
export function compileFastSanitizer(options: sanitizeHtml.IOptions): FastSanitizer {
  const defaults = sanitizeHtml.defaults as sanitizeHtml.IDefaults & { allowedEmptyAttributes: string[] };
  if ((options.disallowedTagsMode ?? defaults.disallowedTagsMode) !== 'discard') refuse('only disallowedTagsMode discard');
  for (const key of [
    'textFilter',
    'exclusiveFilter',
    'onOpenTag',
    'onCloseTag',
    'nestingLimit',
    'parser',
    'transformTags',
    'allowedScriptHostnames',
    'allowedScriptDomains',
    'allowedIframeHostnames',
    'allowedIframeDomains',
  ] as const) {
    if (options[key] !== undefined) refuse(`option ${key}`);
  }
  if (options.enforceHtmlBoundary) refuse('enforceHtmlBoundary');
  if (!Array.isArray(options.allowedTags)) refuse('allowedTags must be a list');
  if (!options.allowedAttributes) refuse('allowedAttributes must be a map');
  const allowedTags = new Set(options.allowedTags);
  const nonText = new Set(options.nonTextTags ?? ['script', 'style', 'textarea', 'option', 'xmp']);
  for (const tag of RAW_TEXT) if (allowedTags.has(tag) || !nonText.has(tag)) refuse(`${tag} must be dropped with its content`);
  if (allowedTags.has('iframe')) refuse('iframe allowed');

  const attributes = new Map<string, Set<string>>();
  for (const [tag, list] of Object.entries(options.allowedAttributes)) {
    for (const a of list) if (typeof a !== 'string' || a.includes('*') || a === 'style') refuse(`attribute ${JSON.stringify(a)} of ${tag}`);
    attributes.set(tag, new Set(list as string[]));
  }
  const classFilters = new Map<string, (cls: string) => boolean>();
  for (const [tag, classes] of Object.entries(options.allowedClasses ?? {})) {
    if (tag === '*' || !Array.isArray(classes) || classes.some((c) => typeof c !== 'string')) refuse(`allowedClasses of ${tag}`);
    const exact = (classes as string[]).filter((c) => !c.includes('*'));
    const glob = globRegExp((classes as string[]).filter((c) => c.includes('*')));
    classFilters.set(tag, (cls) => exact.includes(cls) || (glob !== null && glob.test(cls)));
    // sanitize-html allows the class attribute on a tag with allowed classes.
    attributes.set(tag, new Set([...(attributes.get(tag) ?? []), 'class']));
  }
  const anyTag = attributes.get('*') ?? new Set<string>();
  const selfClosing = new Set(options.selfClosing ?? defaults.selfClosing);
  const allowedEmpty = new Set(defaults.allowedEmptyAttributes);
  const nonBoolean = new Set(options.nonBooleanAttributes ?? defaults.nonBooleanAttributes);
  const schemeAttributes = new Set(options.allowedSchemesAppliedToAttributes ?? defaults.allowedSchemesAppliedToAttributes);
  const byTag = options.allowedSchemesByTag ?? defaults.allowedSchemesByTag;
  const anyScheme = options.allowedSchemes ?? defaults.allowedSchemes;
  if (typeof byTag === 'boolean' || typeof anyScheme === 'boolean') refuse('allowedSchemes must be lists');
  const schemesFor = (tag: string) => (Object.hasOwn(byTag, tag) ? byTag[tag]! : anyScheme);
  const allowProtocolRelative = options.allowProtocolRelative ?? defaults.allowProtocolRelative;

  /** What sanitize-html does with an attribute an allowed tag may keep. */
  const attributeRule = (tag: string, name: string): AttributeRule => ({
    dropIfEmpty: !allowedEmpty.has(name) && (nonBoolean.has(name) || nonBoolean.has('*')),
    writeEmpty: allowedEmpty.has(name),
    schemes: schemeAttributes.has(name) ? schemesFor(tag) : null,
    srcsetSchemes: name === 'srcset' || name === 'imagesrcset' ? schemesFor(name) : null,
    keepClass: name === 'class' ? (classFilters.get(tag) ?? null) : null,
  });
  const tagInfo = (name: string): TagInfo => {
    const allowed = allowedTags.has(name);
    const rules = new Map<string, AttributeRule>();
    if (allowed) for (const a of [...(attributes.get(name) ?? []), ...anyTag]) rules.set(a, attributeRule(name, a));
    return {
      name,
      key: nameKey(name, 0, name.length),
      isVoid: VOID_ELEMENTS.has(name),
      rawText: RAW_TEXT.has(name),
      foreign: FOREIGN.has(name),
      closes: OPEN_IMPLIES_CLOSE.get(name) ?? null,
      allowed,
      nonText: nonText.has(name),
      selfClosing: selfClosing.has(name),
      rules,
      bare: null,
      bareFor: null,
    };
  };
  // Every tag name a rule above mentions, by nameKey (no string to build for a tag met); other
  // names are looked at when met.
  const known = new Map<number, TagInfo>();
  for (const name of new Set([...allowedTags, ...nonText, ...VOID_ELEMENTS, ...RAW_TEXT, ...FOREIGN, ...OPEN_IMPLIES_CLOSE.keys(), ...selfClosing])) {
    if (!/^[a-z][a-z0-9]*$/.test(name)) refuse(`tag name ${name}`);
    const info = tagInfo(name);
    // Two names with one key: the second is looked at when met, as an unknown one.
    if (!known.has(info.key)) known.set(info.key, info);
  }
  const tagAt = (html: string, from: number, to: number): TagInfo => {
    const info = known.get(nameKey(html, from, to));
    return info && sameName(html, from, to, info.name) ? info : tagInfo(html.slice(from, to).toLowerCase());
  };

  /** The attributes an allowed tag keeps, as sanitize-html writes them; null when its srcset is one this module does not rewrite. */
  function writeAttributes(rules: Map<string, AttributeRule>, attribs: sanitizeHtml.Attributes): string | null {
    let out = '';
    for (const a of Object.keys(attribs)) {
      const rule = rules.get(a);
      if (!rule) continue;
      let value = attribs[a]!;
      if (value === '' && rule.dropIfEmpty) continue;
      if (rule.schemes && naughtyHref(value, rule.schemes, allowProtocolRelative)) continue;
      if (rule.srcsetSchemes) {
        for (const candidate of value.split(', ')) {
          const m = CANONICAL_CANDIDATE.exec(candidate);
          if (!m || naughtyHref(m[1]!, rule.srcsetSchemes, allowProtocolRelative)) return null;
        }
      }
      if (rule.keepClass) {
        value = value.split(/\s+/).filter(rule.keepClass).join(' ');
        if (!value) continue;
      }
      out += ` ${a}`;
      if (value) out += `="${escapeAttribute(value)}"`;
      else if (rule.writeEmpty) out += '=""';
    }
    return out;
  }

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
        out += escapeText(amps === 'alone' ? decodeHTML(text) : text);
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
      const tag = tagAt(html, lt + 1, j);
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
          const written = writeAttributes(tag.rules, transformed.attribs);
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

interface AttributeRule {
  /** sanitize-html drops the attribute when its value is empty. */
  dropIfEmpty: boolean;
  /** An empty value is written `=""` (else the bare name). */
  writeEmpty: boolean;
  /** The URL schemes the value may have (allowedSchemesAppliedToAttributes), or null. */
  schemes: readonly string[] | null;
  /** The schemes each srcset candidate may have, or null when not a srcset. */
  srcsetSchemes: readonly string[] | null;
  /** For class: the classes kept, or null. */
  keepClass: ((cls: string) => boolean) | null;
}

/** A tag name and what htmlparser2 and sanitize-html do with it. */
interface TagInfo {
  name: string;
  /** nameKey of the name. */
  key: number;
  isVoid: boolean;
  rawText: boolean;
  foreign: boolean;
  /** The elements that opening this one closes when on top of the stack. */
  closes: Set<string> | null;
  allowed: boolean;
  nonText: boolean;
  selfClosing: boolean;
  /** For an allowed tag: the attributes it may keep. */
  rules: Map<string, AttributeRule>;
  /** The start tag written for the tag without attributes, and the transform it was written with. */
  bare: string | null;
  bareFor: TagTransform | null;
}

/** The index after `</name>` closing the raw text that starts at `from`, or -1 (not found, or not ended by `>` at once). */
function rawTextEnd(html: string, from: number, name: string): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (html.slice(at + 2, at + 2 + name.length).toLowerCase() !== name) continue;
    return html.charCodeAt(at + 2 + name.length) === GT ? at + 3 + name.length : -1;
  }
  return -1;
}
