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
 */

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
  // An absolute http(s) URL ignores the base: not parsing the base too halves the cost.
  const u = isAbsoluteHttpUrl(trimmed) ? parse(trimmed) : parse(trimmed, base);
  if (!isWeb(u) || u.href.length > MAX_URL_LENGTH) return null;
  return u.href;
}

/** True when the value is an absolute http(s) URL on its own (no base needed). */
export function isAbsoluteHttpUrl(value: string): boolean {
  return /^\s*https?:\/\//i.test(value);
}
