/**
 * What an XML feed document is before it is parsed: its root element, and whether it is
 * well-formed. Pure: no I/O.
 *
 * The root decides the format (rss → RSS, rdf:RDF → RDF, feed → Atom), whatever the document
 * contains further down: a code sample in an Atom entry that shows `<rss version="2.0">` does not
 * make the document RSS.
 *
 * Well-formedness is fast-xml-parser's validator (the XML parser feedsmith itself runs on): tags
 * that do not nest or close, a truncated document, several roots, broken attributes are refused
 * with the validator's reason and position. Two slips that feed readers have always recovered
 * from, and feedsmith reads fine, are tolerated: a bare `&` (as in `AT&T`) and HTML named
 * entities (`&nbsp;`); whitespace before the XML declaration is removed by the caller.
 *
 * The validator runs only on documents the quick check (xml-quick-check.ts) cannot vouch for: it
 * accepts a subset of what the validator accepts, in one pass without allocation, so the verdict
 * and the reason are always the validator's, at a fraction of its cost on ordinary feeds.
 */
import { Parser } from 'htmlparser2';
import { XMLValidator } from 'fast-xml-parser';
import { quickWellFormed } from './xml-quick-check.js';

/** The root element's name as written (with its prefix), or null when there is no element. */
export function xmlRoot(source: string): string | null {
  let root: string | null = null;
  const parser = new Parser(
    {
      onopentagname(name) {
        root ??= name;
      },
    },
    { xmlMode: true },
  );
  // The prolog (declaration, comments, doctype) is short: small chunks until the first element,
  // so that the tokenizer stops soon after it.
  for (let i = 0; root === null && i < source.length; i += 512) parser.write(source.slice(i, i + 512));
  parser.reset();
  return root;
}

/** The local name of a qualified name, lower-cased (rdf:RDF → rdf). */
export function localName(qname: string): string {
  return qname.slice(qname.indexOf(':') + 1).toLowerCase();
}

const BARE_AMPERSAND = /&(?!(?:[A-Za-z][A-Za-z0-9._-]*|#[0-9]+|#x[0-9A-Fa-f]+);)/g;

// C0 controls and DEL: shown by their code point (a NUL is not even storable in PostgreSQL text).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const codePoint = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

function describe(err: { msg: string; line: number; col: number }): string {
  return `${err.msg.replace(/\.$/, '').replace(CONTROL, codePoint)} (line ${err.line}, column ${err.col})`;
}

/** Why the document is not well-formed XML, or null when it is. `utf8`: the source's UTF-8 bytes, when the caller has them (saves encoding them for the quick check). */
export function xmlProblem(source: string, utf8?: Uint8Array | null): string | null {
  return quickWellFormed(utf8 ?? source) ? null : validatorProblem(source);
}

/** xmlProblem by the validator alone (the reference the quick check is held to). */
export function validatorProblem(source: string): string | null {
  let result = XMLValidator.validate(source, { allowBooleanAttributes: false });
  if (result === true) return null;
  if (result.err.code === 'InvalidChar' && /'&'/.test(result.err.msg)) {
    // Only now pay for the copy: a bare & is a slip feed readers forgive.
    result = XMLValidator.validate(source.replace(BARE_AMPERSAND, '&amp;'), { allowBooleanAttributes: false });
    if (result === true) return null;
  }
  return describe(result.err);
}
