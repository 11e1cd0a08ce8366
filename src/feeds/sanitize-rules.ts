/**
 * What htmlparser2 (sanitize-html's parser, HTML mode) and sanitize-html do with each tag and
 * attribute, compiled once from sanitize-html options: the tables the fast path
 * (sanitize-fast-path.ts) reads as it goes. Pure: no I/O.
 *
 * From htmlparser2 10: which elements are void, which close an open one when they start, which
 * are read as raw text, which start foreign content. From sanitize-html 2.17 (and launder, whose
 * URL check it applies): which tags and attributes are kept, which empty attributes are dropped or
 * written `=""`, which attributes are checked for their URL scheme, how classes are filtered, which
 * tags are self-closing. From the caller: how it rewrites attributes before sanitize-html sees
 * them (AttributeRewriting: the URL rewriting and the rel of links). compileRules refuses options
 * whose effect is not modelled here (another disallowedTagsMode, filters, attribute globs, a style
 * attribute, script or iframe allowed...), so that a policy change cannot make the fast path drift
 * from sanitize-html unnoticed.
 */
import sanitizeHtml from 'sanitize-html';
import { unitsOf } from './code-units.js';
import { hasControls } from './text-construct.js';

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
  schemes: Schemes | null;
  /** The schemes each srcset candidate may have, or null when not a srcset. */
  srcsetSchemes: Schemes | null;
  /** For class: the classes kept, or null. */
  keepClass: ((cls: string) => boolean) | null;
}

/** An attribute an allowed tag may keep, and what happens to it on its way out. */
export interface AttributeSlot {
  /** Lower case. */
  name: string;
  /** The name's code units, and nameKey of it. */
  units: Uint16Array;
  key: number;
  rule: AttributeRule;
  /** The caller's rewrite is applied to its value (AttributeRewriting.attributes). */
  rewrite: boolean;
  /** The value the caller sets whatever the tag had (AttributeRewriting.set), or null. */
  forced: string | null;
  /** ` name="`, written before its value. */
  open: string;
  /** The attribute written with an empty value: ` name=""` or ` name`. */
  empty: string;
}

/** A tag name and what htmlparser2 and sanitize-html do with it. */
export interface TagInfo {
  name: string;
  /** The name's code units, and nameKey of it. */
  units: Uint16Array;
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
  slots: AttributeSlot[];
  /** The start tag sanitize-html writes for the tag when it has none of them (the forced ones only); '' when not allowed. */
  bareTag: string;
  /** The forced attributes of `slots`, in the order the rewriting sets them, each as written. */
  forced: { slot: number; written: string }[];
  /** The end tag sanitize-html writes: '' when not allowed or self-closing. */
  endTag: string;
  /** `<name`, and what ends the start tag: ` />` for a self-closing one, else `>`. */
  open: string;
  close: string;
  /** bareTag is `<name>`: an allowed tag written so, in lower case, is written as it is. */
  plainStart: boolean;
}

/**
 * How the caller rewrites attributes before sanitize-html checks them (what its
 * transformTags['*'] does: tagTransform in sanitize-fast-path.ts), in a form the fast path applies
 * one attribute at a time.
 */
export interface AttributeRewriting {
  /** The attributes whose value the rewrite is given, on any tag. */
  attributes: readonly string[];
  /** Attributes set to a fixed value on a tag, whatever it had (rel on links). */
  set: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface Rules {
  /**
   * The tag whose name is html[from, to) (ASCII letters and digits, any case), of nameKey `key`;
   * `units` are html's code units (codeUnitsReader).
   */
  tagAt(html: string, units: Uint16Array, from: number, to: number, key: number): TagInfo;
  /**
   * The attribute's value as sanitize-html writes it after its checks (escaped; written
   * ` name="value"`, or slot.empty when ''), undefined when it drops the attribute, null when
   * its value is a srcset not modelled here.
   */
  checkAttribute(slot: AttributeSlot, value: string): string | null | undefined;
  /** The largest number of slots of a tag. */
  maxSlots: number;
}

function escapeAttribute(s: string): string {
  if (!/[&<>"]/.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A list of URL schemes (lower case), and expressions that find one at the start of a URL. */
interface Schemes {
  list: readonly string[];
  /** One of the list, any case, then `:`. */
  allowed: RegExp;
}

const schemesOf = (list: readonly string[]): Schemes => ({ list, allowed: new RegExp(`^(?:${list.map((s) => s.replace(/[.+]/g, '\\$&')).join('|')}):`, 'i') });
/** A scheme (any), then `:`. */
const ANY_SCHEME = /^[a-z][a-z0-9.+-]*:/i;

/** launder 1.7's naughtyHref, which sanitize-html applies to URL attributes. */
function naughtyHref(href: string, schemes: Schemes, allowProtocolRelative: boolean): boolean {
  // A scheme written at the very start, with no space, control or `<` before its colon, is what
  // the cleaning below leaves in front too (the URLs the rewrite writes): read it there, without
  // building a string.
  if (schemes.allowed.test(href)) return false;
  if (ANY_SCHEME.test(href)) return true;
  return naughtyCleanedHref(href, schemes.list, allowProtocolRelative);
}

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
 * A number that stands for a tag name, case folded, so that a tag is looked up without building
 * its name (a small integer hash; the name is compared too, sameName): nameKeyStep over its
 * characters from 0, then masked with NAME_KEY_MASK. Callers fold it in as they read the name.
 */
export const nameKeyStep = (key: number, c: number) => (Math.imul(key, 31) + (c | 0x20)) | 0;
export const NAME_KEY_MASK = 0x3fffffff;

function nameKey(s: string, from: number, to: number): number {
  let key = 0;
  for (let i = from; i < to; i++) key = nameKeyStep(key, s.charCodeAt(i));
  return key & NAME_KEY_MASK;
}

/**
 * True when units[from, to), ASCII letters folded to lower case, are the code units of `name`.
 * `name` is lower case letters, digits and `.:-+`, which folding leaves as they are and no other
 * character folds to.
 */
export function sameName(units: Uint16Array, from: number, to: number, name: Uint16Array): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if ((units[from + i]! | 0x20) !== name[i]) return false;
  return true;
}

function refuse(reason: string): never {
  throw new Error(`sanitize fast path: ${reason}`);
}

/**
 * The rules of `options` (sanitize-html options without transformTags) with the caller's
 * `rewriting`. Throws for options not modelled here.
 */
export function compileRules(options: sanitizeHtml.IOptions, rewriting: AttributeRewriting): Rules {
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
  for (const schemes of [anyScheme, ...Object.values(byTag)]) {
    for (const scheme of schemes) if (!/^[a-z][a-z0-9.+-]*$/.test(scheme)) refuse(`scheme ${scheme}`);
  }
  const allowProtocolRelative = options.allowProtocolRelative ?? defaults.allowProtocolRelative;
  const rewritten = new Set(rewriting.attributes);
  // An attribute both rewritten and set would be dropped by the rewrite and set again after the
  // others, which the slots below do not model.
  for (const [tag, set] of Object.entries(rewriting.set)) {
    for (const [a, value] of Object.entries(set)) {
      if (rewritten.has(a)) refuse(`attribute ${a} of ${tag} both rewritten and set`);
      if (hasControls(value)) refuse(`a control character in the value set for ${a} of ${tag}`);
    }
  }

  /** What sanitize-html does with an attribute an allowed tag may keep. */
  const attributeRule = (tag: string, name: string): AttributeRule => ({
    dropIfEmpty: !allowedEmpty.has(name) && (nonBoolean.has(name) || nonBoolean.has('*')),
    writeEmpty: allowedEmpty.has(name),
    schemes: schemeAttributes.has(name) ? schemesOf(schemesFor(tag)) : null,
    srcsetSchemes: name === 'srcset' || name === 'imagesrcset' ? schemesOf(schemesFor(name)) : null,
    keepClass: name === 'class' ? (classFilters.get(tag) ?? null) : null,
  });

  // sanitize-html's checks, in its order.
  function checkAttribute(slot: AttributeSlot, value: string): string | null | undefined {
    const rule = slot.rule;
    if (value === '' && rule.dropIfEmpty) return undefined;
    if (rule.schemes && naughtyHref(value, rule.schemes, allowProtocolRelative)) return undefined;
    if (rule.srcsetSchemes) {
      for (const candidate of value.split(', ')) {
        const m = CANONICAL_CANDIDATE.exec(candidate);
        if (!m || naughtyHref(m[1]!, rule.srcsetSchemes, allowProtocolRelative)) return null;
      }
    }
    if (slot.name === 'class') {
      // One class (no whitespace) is kept or not; a list is split as sanitize-html splits it.
      if (rule.keepClass) value = !/\s/.test(value) ? (rule.keepClass(value) ? value : '') : value.split(/\s+/).filter(rule.keepClass).join(' ');
      if (!value) return undefined;
    }
    return escapeAttribute(value);
  }

  const tagInfo = (name: string): TagInfo => {
    const allowed = allowedTags.has(name);
    const slots: AttributeSlot[] = [];
    if (allowed) {
      for (const a of new Set([...(attributes.get(name) ?? []), ...anyTag])) {
        if (!/^[a-z][a-z0-9:.-]*$/.test(a)) refuse(`attribute name ${a}`);
        const rule = attributeRule(name, a);
        slots.push({
          name: a,
          units: unitsOf(a),
          key: nameKey(a, 0, a.length),
          rule,
          rewrite: rewritten.has(a),
          forced: rewriting.set[name]?.[a] ?? null,
          open: ` ${a}="`,
          empty: rule.writeEmpty ? ` ${a}=""` : ` ${a}`,
        });
      }
    }
    const info: TagInfo = {
      name,
      units: unitsOf(name),
      key: nameKey(name, 0, name.length),
      isVoid: VOID_ELEMENTS.has(name),
      rawText: RAW_TEXT.has(name),
      foreign: FOREIGN.has(name),
      closes: OPEN_IMPLIES_CLOSE.get(name) ?? null,
      allowed,
      nonText: nonText.has(name),
      selfClosing: selfClosing.has(name),
      slots,
      bareTag: '',
      forced: [],
      endTag: allowed && !selfClosing.has(name) ? `</${name}>` : '',
      plainStart: false,
      open: `<${name}`,
      close: selfClosing.has(name) ? ' />' : '>',
    };
    if (allowed) {
      // Forced attributes an allowed tag does not keep are dropped by sanitize-html: no slot.
      for (const a of Object.keys(rewriting.set[name] ?? {})) {
        const slot = slots.findIndex((s) => s.name === a);
        if (slot === -1) continue;
        const value = checkAttribute(slots[slot]!, slots[slot]!.forced!);
        if (value === null) refuse(`attribute ${a} set on ${name}`);
        if (value === undefined) continue; // dropped by sanitize-html whatever the tag had
        info.forced.push({ slot, written: value ? `${slots[slot]!.open}${value}"` : slots[slot]!.empty });
      }
      info.bareTag = `<${name}${info.forced.map((f) => f.written).join('')}${info.selfClosing ? ' />' : '>'}`;
      info.plainStart = info.bareTag === `<${name}>`;
    }
    return info;
  };
  // Every tag name a rule above mentions, by nameKey (no string to build for a tag met); other
  // names are looked at when met.
  const known = new Map<number, TagInfo>();
  let maxSlots = 0;
  for (const name of new Set([...allowedTags, ...nonText, ...VOID_ELEMENTS, ...RAW_TEXT, ...FOREIGN, ...OPEN_IMPLIES_CLOSE.keys(), ...selfClosing])) {
    if (!/^[a-z][a-z0-9]*$/.test(name)) refuse(`tag name ${name}`);
    const info = tagInfo(name);
    maxSlots = Math.max(maxSlots, info.slots.length);
    // Two names with one key: the second is looked at when met, as an unknown one.
    if (!known.has(info.key)) known.set(info.key, info);
  }
  const tagAt = (html: string, units: Uint16Array, from: number, to: number, key: number): TagInfo => {
    const info = known.get(key);
    // An unknown name is not allowed (allowed ones are all known): it has no slots.
    return info && sameName(units, from, to, info.units) ? info : tagInfo(html.slice(from, to).toLowerCase());
  };

  return { tagAt, checkAttribute, maxSlots };
}
