/**
 * URLs found in a feed → absolute URLs a reader can follow. Pure: no I/O.
 *
 * The base of a value is, from the nearest to the farthest: the `xml:base` of its element and of
 * each ancestor (each one resolved against the next one out), then the response's
 * Content-Location, then the document's own URL after redirects (documentBase). A base that does
 * not end up http(s) (`xml:base="javascript:..."`, `urn:...`) is ignored: the outer base stays.
 *
 * Only http(s) URLs are kept as links; anything else (javascript:, data:, vbscript:, file:, a
 * malformed URL) resolves to null. URLs longer than MAX_URL_LENGTH are refused too: an article
 * URL is a unique key, and PostgreSQL's b-tree cannot index values past ~2.7 kB.
 *
 * Invariant: resolveHttpUrl gives what the WHATWG URL parser gives. Plain ASCII URLs (most of a
 * feed's) are joined as strings instead of parsed (quickResolve), only where that is the parser's
 * answer (resolve-url.test.ts compares the two on generated URLs and bases).
 */

import { codeUnitsReader, unitsOf } from './code-units.js';

export const MAX_URL_LENGTH = 2048;

function parse(value: string, base?: string): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

// The href starts with the scheme, lower-cased (reading it there builds no string, as .protocol does).
const isWeb = (u: URL | null): u is URL => u !== null && /^https?:/.test(u.href);

/** The document's base: its Content-Location (resolved against the final URL) when that is http(s), else the final URL. */
export function documentBase(finalUrl: string, contentLocation?: string | null): string {
  if (contentLocation) {
    const u = parse(contentLocation.trim(), finalUrl);
    if (isWeb(u)) return u.href;
  }
  return finalUrl;
}

/** The base inside an element: its xml:base resolved against the parent's base, unless that is not http(s). */
export function applyXmlBase(parentBase: string, xmlBase: string | null | undefined): string {
  if (xmlBase === null || xmlBase === undefined) return parentBase;
  const u = parse(xmlBase.trim(), parentBase);
  return isWeb(u) ? u.href : parentBase;
}

/** A link resolved against its base: an absolute http(s) URL, or null. */
export function resolveHttpUrl(value: string | null | undefined, base: string): string | null {
  if (!value) return null;
  const trimmed = value.trim();
  const quick = quickResolve(trimmed, base);
  if (quick !== undefined) return quick === null || quick.length > MAX_URL_LENGTH ? null : quick;
  // An absolute http(s) URL ignores the base: not parsing the base too halves the cost.
  const u = isAbsoluteHttpUrl(trimmed) ? parse(trimmed) : parse(trimmed, base);
  if (!isWeb(u) || u.href.length > MAX_URL_LENGTH) return null;
  return u.href;
}

/*
 * The URLs feeds carry most (`/path`, `path/file.jpg`, `https://host/path?query#fragment`, in
 * plain ASCII) are resolved by joining strings: the URL parser gives exactly that string for them
 * (resolve-url.test.ts holds the two to the same answer on generated URLs and bases), at a
 * fraction of its cost (a URL object per link, the base parsed again each time). Anything else
 * (dot segments, a port, user info, backslashes, characters the parser would encode or drop, a
 * host it would rewrite...) is left to the parser.
 */

/** The parts of the last base seen: the items of a document share one. */
let lastBase: { base: string; origin: string; directory: string } | null = null;
/** The origin and directory of an http(s) base (`http://host:port`, `http://host:port/dir/`), or null. */
function baseParts(base: string): { origin: string; directory: string } | null {
  if (lastBase?.base === base) return lastBase;
  const u = parse(base);
  if (!isWeb(u) || u.username !== '' || u.password !== '') return null;
  const origin = `${u.protocol}//${u.host}`;
  lastBase = { base, origin, directory: origin + u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1) };
  return lastBase;
}

// Characters written as they are in each part of a URL: ASCII letters and digits and these
// (the parser percent-encodes or drops others, and reads a backslash as a slash).
const PATH = 1;
const QUERY = 2;
const FRAGMENT = 4;
const HOST = 8;
const URL_CHARS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9]/.test(ch)) URL_CHARS[c] = PATH | QUERY | FRAGMENT;
  if (/[a-z0-9.-]/.test(ch)) URL_CHARS[c]! |= HOST;
  if ("-._~!$&'()*+,;=:@/%".includes(ch)) URL_CHARS[c]! |= PATH;
  if ('-._~!$&()*+,;=:@/?%'.includes(ch)) URL_CHARS[c]! |= QUERY;
  if ("-._~!$&'()*+,;=:@/?%".includes(ch)) URL_CHARS[c]! |= FRAGMENT;
}
const charIs = (c: number, part: number) => c < 128 && (URL_CHARS[c]! & part) !== 0;

/**
 * True when u[from, n) is a path (from a `/` or the start of a relative path), then maybe a
 * query and a fragment, that the parser writes as it is: allowed characters only, and no dot
 * segment (`.`, `..`, or `%2e` in any form) to remove. `u` are a string's code units (codeUnitsReader), `n` its length.
 */
function plainPathAndAfter(u: Uint16Array, n: number, from: number): boolean {
  let i = from;
  let segment = from;
  for (; i <= n; i++) {
    const c = u[i]!;
    if (c === 47 || c === 63 || c === 35 || i === n) {
      // the end of a segment: `.` or `..`?
      const length = i - segment;
      if ((length === 1 || length === 2) && u[segment] === 46 && (length === 1 || u[segment + 1] === 46)) return false;
      if (c !== 47 || i === n) break;
      segment = i + 1;
    } else if (!charIs(c, PATH)) return false;
    else if (c === 37 && u[i + 1] === 50 && (u[i + 2]! | 0x20) === 101) return false;
  }
  if (i < n && u[i] === 63) for (i++; i < n && u[i] !== 35; i++) if (!charIs(u[i]!, QUERY)) return false;
  if (i < n && u[i] === 35) for (i++; i < n; i++) if (!charIs(u[i]!, FRAGMENT)) return false;
  return true;
}

/** The URL strings are read as code units, not through charCodeAt (code-units.ts). */
const readUnits = codeUnitsReader();
const HTTP = unitsOf('http://');
const HTTPS = unitsOf('https://');
const PUNYCODE = unitsOf('xn--');

/** True when u[at, n) starts with `prefix`. */
function startsWithUnits(u: Uint16Array, n: number, at: number, prefix: Uint16Array): boolean {
  if (at + prefix.length > n) return false;
  for (let k = 0; k < prefix.length; k++) if (u[at + k] !== prefix[k]) return false;
  return true;
}

/**
 * The href the URL parser gives for `value` (trimmed) against `base`, or null when it is not
 * http(s), for the plain forms; undefined for anything else (ask the parser). Exported for its
 * test.
 */
export function quickResolve(value: string, base: string): string | null | undefined {
  const n = value.length;
  const u = readUnits(value);
  const c = u[0]!;
  if (c === 104 && (startsWithUnits(u, n, 0, HTTP) || startsWithUnits(u, n, 0, HTTPS))) {
    // An absolute URL: a host of lower-case labels whose last starts with a letter (the parser
    // reads a number there as an IPv4 address, and checks `xn--` labels), then a path.
    const hostStart = u[4] === 58 ? 7 : 8;
    let i = hostStart;
    let label = i;
    for (; i < n; i++) {
      const d = u[i]!;
      if (d === 46) {
        if (i === label || startsWithUnits(u, n, label, PUNYCODE)) return undefined;
        label = i + 1;
      } else if (!charIs(d, HOST)) break;
    }
    if (i === label || startsWithUnits(u, n, label, PUNYCODE) || !(u[label]! >= 97 && u[label]! <= 122)) return undefined;
    if (i === n) return `${value}/`;
    return u[i] === 47 && plainPathAndAfter(u, n, i) ? value : undefined;
  }
  if (c === 47) {
    // An absolute path (not `//host`, not `/\`).
    const d = u[1];
    if (d === 47 || d === 92) return undefined;
    const parts = baseParts(base);
    return parts && plainPathAndAfter(u, n, 0) ? parts.origin + value : undefined;
  }
  if (n > 0 && charIs(c, PATH) && c !== 46 && c !== 37 && c !== 47) {
    // A relative path, whose first segment holds no `:` (it would be a scheme).
    for (let i = 0; i < n; i++) {
      const d = u[i];
      if (d === 58) return undefined;
      if (d === 47 || d === 63 || d === 35) break;
    }
    const parts = baseParts(base);
    return parts && plainPathAndAfter(u, n, 0) ? parts.directory + value : undefined;
  }
  return undefined;
}

/** True when the value is an absolute http(s) URL on its own (no base needed). */
export function isAbsoluteHttpUrl(value: string): boolean {
  return /^\s*https?:\/\//i.test(value);
}
