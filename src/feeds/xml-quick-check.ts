/**
 * A quick well-formedness check of a feed document: one pass over its UTF-8 bytes, no allocation
 * but a stack of offsets, that answers true only for documents the full check (xml-check.ts:
 * fast-xml-parser's validator, a bare `&` forgiven) accepts too. Pure: no I/O.
 *
 * Why: the validator builds a string character by character for every tag name and attribute
 * list, which cost about a fifth of feedsmith's own parse on every refresh, for a verdict that is
 * almost always "well-formed".
 *
 * Why bytes: the markup the check reads is ASCII, and in UTF-8 every byte of a non-ASCII
 * character is 0x80 or above, so the bytes show the same structure as the characters (names,
 * quotes, `<`, `&`; anything non-ASCII is in no class either way). Reading a Uint8Array is plain
 * indexed loads, and it stays that fast in every process: the platform's processes load ioredis,
 * whose `VerbatimString extends String` leaves String.prototype slow for good, and `charCodeAt`
 * with it (three to four times slower on this check; docs/benchmarks.md, `npm run bench:strings`).
 * A refresh hands over the body as received when it was read as UTF-8 (no copy); any other text
 * is encoded first.
 *
 * Invariant (tested against the validator on malformed and generated documents,
 * xml-quick-check.test.ts): quickWellFormed(s) ⇒ the validator accepts s. It recognises a strict
 * subset of what the validator accepts, with the validator's own rules where they are looser than
 * XML's (it does not check characters in text or attribute values, nor names beyond their shape):
 *   document  = ws* (pi | comment | doctype | ws)* element (ws | comment | pi)*
 *   element   = '<' name (ws+ name ws* '=' ws* quoted)* ws* ('/>' | '>' content '</' name ws* '>')
 *   content   = (text | element | comment | cdata | pi)*
 * with ASCII names ([A-Za-z_][A-Za-z0-9_.:-]*), no attribute twice on an element, the closing
 * name equal to the opening one, and in text every `&` either a reference the validator accepts
 * (`&name;` of at most 20 word characters, `&#…`) or a bare one (as in `AT&T`), which xml-check.ts
 * forgives. Whitespace is the validator's: space, tab, CR, LF.
 * Anything else (a second root, a name outside ASCII, an unterminated comment, a doctype inside
 * the root, text after it, an `<?xml` declaration not at the start, a byte-order mark...) answers false: not
 * "malformed", but "ask the validator", which then gives the verdict and its reason. So the verdict
 * on every document stays the validator's.
 */

import { TAB, LF, CR, SPACE, BANG, DQUOTE, HASH, AMP, SQUOTE, DASH, DOT, SLASH, COLON, SEMI, LT, EQ, GT, QUESTION, RSQB, UNDERSCORE } from './char-codes.js';

const isAlpha = (c: number | undefined) => c !== undefined && ((c >= 97 && c <= 122) || (c >= 65 && c <= 90));
const isDigit = (c: number | undefined) => c !== undefined && c >= 48 && c <= 57;
/** A word character (\w), what the validator allows in an entity name. */
const isWord = (c: number | undefined) => isAlpha(c) || isDigit(c) || c === UNDERSCORE;

// Character classes by table (ASCII only; anything else is in none of them).
const WS = 1;
const NAME_START = 2;
const NAME_CHAR = 4;
const CLASS = new Uint8Array(128);
for (const c of [SPACE, LF, TAB, CR]) CLASS[c] = WS;
for (let c = 0; c < 128; c++) {
  if (isAlpha(c) || c === UNDERSCORE) CLASS[c]! |= NAME_START | NAME_CHAR;
  if (isDigit(c) || c === DASH || c === DOT || c === COLON) CLASS[c]! |= NAME_CHAR;
}
// `c` is a byte, or undefined past the end (in no class).
const isWs = (c: number | undefined) => c !== undefined && c < 128 && (CLASS[c]! & WS) !== 0;
const isNameStart = (c: number | undefined) => c !== undefined && c < 128 && (CLASS[c]! & NAME_START) !== 0;
const isNameChar = (c: number | undefined) => c !== undefined && c < 128 && (CLASS[c]! & NAME_CHAR) !== 0;

/** The end of the name starting at `i` (i itself when there is none). */
function nameEnd(s: Uint8Array, i: number): number {
  if (!isNameStart(s[i])) return i;
  let j = i + 1;
  while (isNameChar(s[j])) j++;
  return j;
}

function skipWs(s: Uint8Array, i: number): number {
  while (isWs(s[i])) i++;
  return i;
}

/** True when s[a, a+len) equals s[b, b+len). */
function sameRange(s: Uint8Array, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (s[a + k] !== s[b + k]) return false;
  return true;
}

/** The index of the first `c` at or after `from`, or the length when there is none. */
function indexOrEnd(s: Uint8Array, c: number, from: number): number {
  const at = s.indexOf(c, from);
  return at === -1 ? s.length : at;
}

/** The index of the first `a` followed by `b` (and `c`, when given) at or after `from`, or -1. */
function indexOfRun(s: Uint8Array, from: number, a: number, b: number, c?: number): number {
  const n = s.length;
  for (let i = indexOrEnd(s, a, from); i < n; i = indexOrEnd(s, a, i + 1)) if (s[i + 1] === b && (c === undefined || s[i + 2] === c)) return i;
  return -1;
}

const encoder = new TextEncoder();
const XML = encoder.encode('xml');
const COMMENT = encoder.encode('<!--');
const CDATA = encoder.encode('<![CDATA[');
const DOCTYPE = encoder.encode('<!DOCTYPE');

/** Whether s[i, ...) starts with `bytes`. */
function startsWith(s: Uint8Array, i: number, bytes: Uint8Array): boolean {
  for (let k = 0; k < bytes.length; k++) if (s[i + k] !== bytes[k]) return false;
  return true;
}

/**
 * The `&` at `i` in text: a reference the validator accepts, or a bare one xml-check.ts forgives
 * (it rewrites `&` to `&amp;` unless `[A-Za-z][A-Za-z0-9._-]*;`, `#[0-9]+;` or `#x[0-9A-Fa-f]+;`
 * follows). False for a reference shaped like one that the validator refuses (`&a.b;`, a name
 * longer than 20 characters).
 */
function ampersandAccepted(s: Uint8Array, i: number): boolean {
  const c = s[i + 1];
  // `&#`: a numeric reference the validator reads (`&#38;`, `&#x26;`), or bare.
  if (c === HASH || !isAlpha(c)) return true;
  let j = i + 2;
  let word = true;
  for (let d = s[j]; isAlpha(d) || isDigit(d) || d === DOT || d === DASH || d === UNDERSCORE; d = s[++j]) word &&= isWord(d);
  if (s[j] !== SEMI) return true; // bare
  return word && j - (i + 1) <= 20;
}

/**
 * A processing instruction at `i` (`<?`): the index after its `?>`, or -1. It must name a target
 * (the validator ends `<?>` at once, which this function would not). `<?xml ` is the declaration,
 * which the validator allows only at the very start.
 */
function processingInstruction(s: Uint8Array, i: number): number {
  const start = i + 2;
  if (!isNameStart(s[start])) return -1;
  const afterTarget = s[start + 3];
  if (i !== 0 && startsWith(s, start, XML) && (afterTarget === QUESTION || afterTarget === SPACE)) return -1;
  const end = indexOfRun(s, start, QUESTION, GT);
  return end === -1 ? -1 : end + 2;
}

/** A doctype at `i` (`<!DOCTYPE`): the index after it, counting `<` and `>` as the validator does, or -1. */
function doctype(s: Uint8Array, i: number): number {
  let open = 1;
  for (let j = i + 9; j < s.length; j++) {
    const c = s[j];
    if (c === LT) open++;
    else if (c === GT && --open === 0) return j + 1;
  }
  return -1;
}

/** Comment (`<!--`) or CDATA section (`<![CDATA[`) at `i`: the index after it, or -1. */
function commentOrCdata(s: Uint8Array, i: number): number {
  if (startsWith(s, i, COMMENT)) {
    const end = indexOfRun(s, i + 4, DASH, DASH, GT);
    return end === -1 ? -1 : end + 3;
  }
  if (startsWith(s, i, CDATA)) {
    const end = indexOfRun(s, i + 9, RSQB, RSQB, GT);
    return end === -1 ? -1 : end + 3;
  }
  return -1;
}

const MAX_ATTRIBUTES = 64;
const attrStart = new Int32Array(MAX_ATTRIBUTES);
const attrLength = new Int32Array(MAX_ATTRIBUTES);

/**
 * The attributes and end of the start tag whose name ends at `i`: the index after its `>`,
 * negated (minus one) for a self-closing tag (`/>`), or null when it is not in the subset.
 */
function startTagEnd(s: Uint8Array, i: number): number | null {
  let count = 0;
  for (;;) {
    const c = s[i];
    if (c === GT) return i + 1;
    if (c === SLASH) return s[i + 1] === GT ? -(i + 2) - 1 : null;
    if (!isWs(c)) return null; // an attribute must follow whitespace
    i = skipWs(s, i);
    const d = s[i];
    if (d === GT || d === SLASH) continue;
    const end = nameEnd(s, i);
    if (end === i || count === MAX_ATTRIBUTES) return null;
    const length = end - i;
    for (let k = 0; k < count; k++) if (attrLength[k] === length && sameRange(s, attrStart[k]!, i, length)) return null;
    attrStart[count] = i;
    attrLength[count++] = length;
    i = skipWs(s, end);
    if (s[i] !== EQ) return null;
    i = skipWs(s, i + 1);
    const quote = s[i];
    if (quote !== DQUOTE && quote !== SQUOTE) return null;
    const close = indexOrEnd(s, quote, i + 1);
    if (close === s.length) return null;
    i = close + 1;
  }
}

/** After the root element: whitespace, comments and processing instructions only. */
function epilogueAccepted(s: Uint8Array, i: number): boolean {
  for (;;) {
    i = skipWs(s, i);
    if (i >= s.length) return true;
    if (s[i] !== LT) return false;
    const next = s[i + 1];
    i = next === QUESTION ? processingInstruction(s, i) : next === BANG && startsWith(s, i, COMMENT) ? commentOrCdata(s, i) : -1;
    if (i === -1) return false;
  }
}

let openStart: Int32Array = new Int32Array(256);
let openLength: Int32Array = new Int32Array(256);

/**
 * True only when the document is well-formed as xml-check.ts judges it (see the header); false
 * means "ask the validator". `doc`: the text, or its UTF-8 bytes (then read without a copy).
 */
export function quickWellFormed(doc: string | Uint8Array): boolean {
  const s = typeof doc === 'string' ? encoder.encode(doc) : doc;
  let i = 0;
  // The prolog: declaration, comments, doctype, whitespace.
  for (;;) {
    i = skipWs(s, i);
    if (s[i] !== LT) return false;
    const next = s[i + 1];
    if (next === QUESTION) i = processingInstruction(s, i);
    else if (next === BANG) i = startsWith(s, i, DOCTYPE) ? doctype(s, i) : startsWith(s, i, COMMENT) ? commentOrCdata(s, i) : -1;
    else break;
    if (i === -1) return false;
  }
  // The root element and everything inside it. `i` is at a `<`.
  let depth = 0;
  // The next `&` at or after the text being looked at (n: none), so that the document is searched once.
  let amp = -1;
  for (;;) {
    const next = s[i + 1];
    if (next === SLASH) {
      if (depth === 0) return false;
      // The open element's name, and no more of a name after it (one pass over the characters).
      const start = i + 2;
      const length = openLength[depth - 1]!;
      if (!sameRange(s, openStart[depth - 1]!, start, length) || isNameChar(s[start + length])) return false;
      i = skipWs(s, start + length);
      if (s[i] !== GT) return false;
      i++;
      if (--depth === 0) return epilogueAccepted(s, i);
    } else if (next === BANG) {
      if (depth === 0) return false;
      i = commentOrCdata(s, i);
      if (i === -1) return false;
    } else if (next === QUESTION) {
      if (depth === 0) return false;
      i = processingInstruction(s, i);
      if (i === -1) return false;
    } else {
      const start = i + 1;
      const end = nameEnd(s, start);
      if (end === start) return false;
      const after = startTagEnd(s, end);
      if (after === null) return false;
      if (after < 0) {
        i = -after - 1;
        if (depth === 0) return epilogueAccepted(s, i);
      } else {
        if (depth === openStart.length) {
          openStart = growInt32(openStart);
          openLength = growInt32(openLength);
        }
        openStart[depth] = start;
        openLength[depth++] = end - start;
        i = after;
      }
    }
    // Text up to the next markup: its every `&` accepted.
    const lt = indexOrEnd(s, LT, i);
    if (lt === s.length) return false;
    if (amp < i) amp = indexOrEnd(s, AMP, i);
    for (; amp < lt; amp = indexOrEnd(s, AMP, amp + 1)) if (!ampersandAccepted(s, amp)) return false;
    i = lt;
  }
}

function growInt32(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
