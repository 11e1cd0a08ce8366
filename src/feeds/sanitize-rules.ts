/**
 * What htmlparser2 (sanitize-html's parser, HTML mode) and sanitize-html do with each tag and
 * attribute, compiled once from sanitize-html options: the tables the fast path
 * (sanitize-fast-path.ts) reads as it goes. Pure: no I/O.
 *
 * From htmlparser2 10: which elements are void, which close an open one when they start, which
 * are read as raw text, which start foreign content. From sanitize-html 2.17 (and launder, whose
 * URL check it applies): which tags and attributes are kept, which empty attributes are dropped or
 * written `=""`, which attributes are checked for their URL scheme, how classes are filtered, which
 * tags are self-closing. compileRules refuses options whose effect is not modelled here (another
 * disallowedTagsMode, filters, attribute globs, a style attribute, script or iframe allowed...), so
 * that a policy change cannot make the fast path drift from sanitize-html unnoticed.
 */
import sanitizeHtml from 'sanitize-html';

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
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((t): [string, Set<string>] => [t, P]),
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

export interface AttributeRule {
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
export interface TagInfo {
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
  /** The start tag written for the tag without attributes, and the transform it was written with (the fast path's cache). */
  bare: string | null;
  bareFor: unknown;
}

export interface Rules {
  /** The tag whose name is html[from, to) (ASCII letters and digits, any case). */
  tagAt(html: string, from: number, to: number): TagInfo;
  /** The attributes an allowed tag keeps, as sanitize-html writes them; null when its srcset is one not modelled here. */
  writeAttributes(tag: TagInfo, attribs: sanitizeHtml.Attributes): string | null;
}

function escapeAttribute(s: string): string {
  if (!/[&<>"]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** launder 1.7's naughtyHref, which sanitize-html applies to URL attributes. */
function naughtyHref(href: string, allowedSchemes: readonly string[], allowProtocolRelative: boolean): boolean {
  // A scheme written at the very start, with no space, control or `<` before its colon, is what
  // the cleaning below leaves in front too (the URLs the transform writes): read it there.
  const scheme = SCHEME_FIRST.exec(href);
  if (scheme) return !allowedSchemes.includes(scheme[1]!.toLowerCase());
  return naughtyCleanedHref(href, allowedSchemes, allowProtocolRelative);
}

const SCHEME_FIRST = /^([a-zA-Z][a-zA-Z0-9.\-+]*):/;

function naughtyCleanedHref(href: string, allowedSchemes: readonly string[], allowProtocolRelative: boolean): boolean {
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
export function sameName(s: string, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if ((s.charCodeAt(from + i) | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}

function refuse(reason: string): never {
  throw new Error(`sanitize fast path: ${reason}`);
}

/** The rules of `options` (sanitize-html options without transformTags). Throws for options not modelled here. */
export function compileRules(options: sanitizeHtml.IOptions): Rules {
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

  function writeAttributes(tag: TagInfo, attribs: sanitizeHtml.Attributes): string | null {
    let out = '';
    for (const a of Object.keys(attribs)) {
      const rule = tag.rules.get(a);
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

  return { tagAt, writeAttributes };
}
