/**
 * HTML from a feed → HTML a reader can render without running the feed author's code. Pure.
 *
 * sanitize-html with an allow-list: only the tags, attributes and URL schemes below survive;
 * everything else is dropped (a dropped element keeps its text, except the elements in
 * DROPPED_WITH_CONTENT, whose content goes too). In particular nothing of: script, style, link,
 * meta, base, iframe/frame, object/embed, form and its controls, svg, math, template; no `on*`
 * attribute, no `style` attribute (CSS can load URLs), no `id`/`name` (they could clobber a
 * reader page's globals), no `class` but `language-*`/`lang-*` on code blocks.
 *
 * URLs (href, src, srcset, poster, cite) are resolved against the base of the element that held
 * the HTML (resolve-url.ts) before the scheme check; a URL that does not resolve, or resolves to
 * another scheme than the ones allowed for it, is dropped (the element stays). Links get
 * rel="nofollow noopener noreferrer". `data:` is kept only as the src of an img, for raster
 * images (png, gif, jpeg, webp, avif) in base64.
 *
 * Idempotent: sanitizing the output again gives the same output (the job that re-sanitizes
 * stored articles relies on it).
 *
 * Cost: text without markup and plain formatting are already clean; other HTML goes through the
 * fast path (sanitize-fast-path.ts), which gives sanitize-html's output for the HTML its parser
 * reads as written, with the same policy and URL rewriting (URL_REWRITING), and hands anything
 * else to sanitize-html itself.
 */
import sanitizeHtml from 'sanitize-html';
import { AMP, COMMA, GT, HASH, LT, SEMI, SLASH } from './char-codes.js';
import { codeUnitsReader } from './code-units.js';
import { resolveHttpUrl } from './resolve-url.js';
import { compileFastSanitizer, tagTransform, type AttributeRewriting, type RewriteAttribute } from './sanitize-fast-path.js';
import { stripControls } from './text-construct.js';

/**
 * Version of this policy. Raise it whenever the lists below change: the feeds leader then cleans
 * the stored articles of older versions again (sanitize-stored-articles.ts).
 */
export const SANITIZER_VERSION = 1;

export const ALLOWED_TAGS = [
  'a',
  'abbr',
  'audio',
  'b',
  'bdi',
  'bdo',
  'blockquote',
  'br',
  'caption',
  'cite',
  'code',
  'col',
  'colgroup',
  'dd',
  'del',
  'details',
  'dfn',
  'div',
  'dl',
  'dt',
  'em',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'i',
  'img',
  'ins',
  'kbd',
  'li',
  'mark',
  'ol',
  'p',
  'picture',
  'pre',
  'q',
  'rp',
  'rt',
  'ruby',
  's',
  'samp',
  'small',
  'source',
  'span',
  'strong',
  'sub',
  'summary',
  'sup',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'time',
  'tr',
  'u',
  'ul',
  'var',
  'video',
  'wbr',
] as const;

export const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  '*': ['title', 'lang', 'dir'],
  a: ['href', 'hreflang', 'rel'],
  img: ['src', 'srcset', 'sizes', 'alt', 'width', 'height'],
  picture: [],
  source: ['src', 'srcset', 'sizes', 'type', 'media'],
  video: ['src', 'poster', 'width', 'height', 'controls', 'loop', 'muted', 'playsinline'],
  audio: ['src', 'controls', 'loop', 'muted'],
  blockquote: ['cite'],
  q: ['cite'],
  del: ['cite', 'datetime'],
  ins: ['cite', 'datetime'],
  time: ['datetime'],
  ol: ['start', 'reversed', 'type'],
  li: ['value'],
  td: ['colspan', 'rowspan', 'headers'],
  th: ['colspan', 'rowspan', 'headers', 'scope', 'abbr'],
  col: ['span'],
  colgroup: ['span'],
  details: ['open'],
  code: ['class'],
  pre: ['class'],
};

/** Schemes a URL attribute may keep, per attribute (data: is handled apart, img src only). */
const URL_SCHEMES: Record<string, string[]> = {
  href: ['http', 'https', 'mailto'],
  src: ['http', 'https'],
  srcset: ['http', 'https'],
  poster: ['http', 'https'],
  cite: ['http', 'https'],
};

/** Disallowed elements whose content is dropped with them (other disallowed elements keep their text). */
const DROPPED_WITH_CONTENT = [
  'script',
  'style',
  'template',
  'noscript',
  'noembed',
  'noframes',
  'xmp',
  'plaintext',
  'textarea',
  'select',
  'option',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
  'head',
  'title',
];

const URL_ATTRIBUTES = Object.keys(URL_SCHEMES);
const DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp|avif);base64,[a-z0-9+/=\s]*$/i;
const REL = 'nofollow noopener noreferrer';

/** resolveSrcset reads the value as code units, not through charCodeAt (code-units.ts). */
const readSrcsetUnits = codeUnitsReader();

/** srcset → its candidates ("url descriptor"), each URL resolved; candidates that do not resolve are dropped. */
function resolveSrcset(value: string, base: string): string | null {
  const out: string[] = [];
  const n = value.length;
  const u = readSrcsetUnits(value);
  let i = 0;
  while (i < n) {
    while (i < n && (u[i] === COMMA || isJsSpace(u[i]!))) i++;
    let j = i;
    while (j < n && !isJsSpace(u[j]!)) j++;
    let url: string;
    let descriptor = '';
    if (u[j - 1] === COMMA) {
      // A URL ending in commas ends its candidate: the commas are not part of it.
      let end = j - 1;
      while (end > i && u[end - 1] === COMMA) end--;
      url = value.slice(i, end);
    } else {
      url = value.slice(i, j);
      const end = value.indexOf(',', j);
      descriptor = value.slice(j, end === -1 ? n : end).trim();
      j = end === -1 ? n : end + 1;
    }
    i = j;
    if (!url) continue;
    const resolved = resolveHttpUrl(url, base);
    // (An href holds no whitespace: the URL parser encodes or drops it. A comma would split the candidate.)
    if (resolved && !resolved.includes(',')) out.push(descriptor ? `${resolved} ${descriptor}` : resolved);
  }
  return out.length ? out.join(', ') : null;
}

function allowedUrl(tag: string, attribute: string, value: string, base: string): string | null {
  const trimmed = value.trim();
  if (attribute === 'srcset') return resolveSrcset(trimmed, base);
  if (tag === 'img' && attribute === 'src' && DATA_IMAGE.test(trimmed)) return trimmed.replace(/\s+/g, '');
  if (attribute === 'href' && /^mailto:/i.test(trimmed)) return trimmed;
  return resolveHttpUrl(trimmed, base);
}

// Allowed elements that are clean without any attribute (not `a`, which always gets its rel, nor
// media without a source), and which of them are void.
const PLAIN_TAGS = new Set<string>(ALLOWED_TAGS.filter((t) => !['a', 'img', 'source', 'picture', 'video', 'audio', 'col'].includes(t)));
const VOID_TAGS = new Set(['br', 'hr', 'wbr']);

/** JavaScript's \s: what the expression `<name\s*\/>` allows before the slash. */
const isJsSpace = (c: number) =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;
const isLowerAlpha = (c: number) => c >= 97 && c <= 122;
const isAsciiAlpha = (c: number) => isLowerAlpha(c) || (c >= 65 && c <= 90);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAsciiAlnum = (c: number) => isAsciiAlpha(c) || isDigit(c);
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/** True when the `&` at `i` starts a character reference: `&name;`, `&#` 1-7 digits `;`, `&#x` 1-6 hex digits `;` (any case). `u`: code units (codeUnitsReader). */
function isReference(u: Uint16Array, i: number): boolean {
  let j = i + 1;
  const c = u[j]!;
  if (isAsciiAlpha(c)) {
    while (isAsciiAlnum(u[j]!)) j++;
    return u[j] === SEMI;
  }
  if (c !== HASH) return false;
  j++;
  const x = u[j] === 120 || u[j] === 88;
  if (x) j++;
  const start = j;
  while (x ? isHex(u[j]!) : isDigit(u[j]!)) j++;
  const digits = j - start;
  return digits >= 1 && digits <= (x ? 6 : 7) && u[j] === SEMI;
}

/** sanitizeContent reads its input as code units, not through charCodeAt (code-units.ts), once for both its scanners. */
const readUnits = codeUnitsReader();

/**
 * True when `html` (of code units `u`) is already clean: only elements of PLAIN_TAGS written in lower case without
 * any attribute (`<name>`, `</name>`, `<name/>` or `<name />` for a void one), properly nested and
 * closed, and text without `<`, `>` or an `&` that does not start a character reference.
 * sanitize-html would give it back unchanged but for serialization (`<br>` → `<br />`), at about 50
 * times the cost. Anything else (an attribute, a comment, any other element, a stray `<`) is left
 * to the sanitizer. One pass over the code units, which stops at the first thing that is not plain
 * (it was a regular expression, whose matches cost more than the rest of the mapping of a plain
 * item).
 */
function isPlainMarkup(html: string, u: Uint16Array): boolean {
  const open: string[] = [];
  const n = html.length;
  for (let i = 0; ; ) {
    // The text up to the next tag: no `>`, and only references after an `&`.
    let lt = i;
    for (; lt < n; lt++) {
      const c = u[lt]!;
      if (c > GT) continue;
      if (c === LT) break;
      if (c === GT || (c === AMP && !isReference(u, lt))) return false;
    }
    if (lt === n) return open.length === 0;
    let j = lt + 1;
    const closing = u[j] === SLASH;
    if (closing) j++;
    const start = j;
    if (!isLowerAlpha(u[j]!)) return false; // an upper-case name is not plain either
    while (isLowerAlpha(u[j]!) || isDigit(u[j]!)) j++;
    if (isAsciiAlpha(u[j]!)) return false;
    const name = html.slice(start, j);
    let k = j;
    while (isJsSpace(u[k]!)) k++;
    const selfClosing = u[k] === SLASH && u[k + 1] === GT;
    if (selfClosing) j = k + 1;
    else if (u[j] !== GT) return false;
    if (!PLAIN_TAGS.has(name)) return false;
    if (VOID_TAGS.has(name)) {
      if (closing) return false;
    } else if (selfClosing) return false;
    else if (!closing) open.push(name);
    else if (open.pop() !== name) return false;
    i = j + 1;
  }
}

/** Everything but the URL rewriting, which depends on the document's base: built once. */
const BASE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedClasses: { code: ['language-*', 'lang-*'], pre: ['language-*', 'lang-*'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesByTag: { a: ['http', 'https', 'mailto'], img: ['http', 'https', 'data'] },
  allowedSchemesAppliedToAttributes: [
    'href',
    'src',
    'cite',
    'poster',
    'srcset',
    'action',
    'formaction',
    'data',
    'xlink:href',
    'background',
    'longdesc',
    'usemap',
    'codebase',
    'dynsrc',
    'lowsrc',
  ],
  allowProtocolRelative: false,
  allowedStyles: {},
  parseStyleAttributes: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  allowVulnerableTags: false,
};

/**
 * What the URL rewriting does before sanitize-html checks tags, attributes and schemes: every URL
 * attribute resolved against the base (or dropped), and links given their rel. sanitize-html gets
 * it as its transformTags (tagTransform), the fast path attribute by attribute.
 */
export const URL_REWRITING: AttributeRewriting = { attributes: URL_ATTRIBUTES, set: { a: { rel: REL } } };

/** The rewrite of URL_REWRITING for content whose URLs resolve against `base`. */
export function rewriteUrls(base: string): RewriteAttribute {
  return (tag, attribute, value) => allowedUrl(tag, attribute, value, base);
}

/** The policy sanitize-html applies, but for the URL rewriting (which depends on the base). */
export const SANITIZE_POLICY: Readonly<sanitizeHtml.IOptions> = BASE_OPTIONS;

/** The options sanitize-html gets for content whose URLs resolve against `base`. */
export function sanitizeOptions(base: string): sanitizeHtml.IOptions {
  return { ...BASE_OPTIONS, transformTags: { '*': tagTransform(URL_REWRITING, rewriteUrls(base)) } };
}

// A character that makes text more than text: markup, or a control stripControls removes.
// eslint-disable-next-line no-control-regex
const MARKUP_OR_CONTROL = /[<>&\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** sanitize-html's result, without sanitize-html for HTML it would read without repairs (sanitize-fast-path.ts). */
const sanitizeFastPath = compileFastSanitizer(BASE_OPTIONS, URL_REWRITING);

/** The rewrite for the last base: the items of a document share one. */
let lastRewrite: { base: string; rewrite: RewriteAttribute } | null = null;
function rewriteFor(base: string): RewriteAttribute {
  if (lastRewrite?.base !== base) lastRewrite = { base, rewrite: rewriteUrls(base) };
  return lastRewrite.rewrite;
}

/** Sanitized HTML, URLs resolved against `base`; null when nothing visible is left. */
export function sanitizeContent(html: string | null | undefined, base: string): string | null {
  if (!html) return null;
  // Text without markup, or with plain formatting only (the common case of summaries), is
  // already what sanitize-html would return.
  if (!MARKUP_OR_CONTROL.test(html)) return html.trim() || null;
  const units = readUnits(html);
  if (isPlainMarkup(html, units)) return stripControls(html).trim() || null;
  // (The fast path's answer is without controls already.)
  const clean = sanitizeFastPath(html, rewriteFor(base), units) ?? stripControls(sanitizeHtml(html, sanitizeOptions(base)));
  return clean.trim() || null;
}
