/**
 * Bytes of a feed response → text, and the encoding they were read in. Pure: no I/O. The order
 * of the candidates (BOM, Content-Type charset, XML declaration, UTF-8; UTF-16/32 recognised from
 * the first bytes; windows-1252 last) is docs/feeds.md#encodings.
 *
 * Invariants: a candidate is used only when the bytes are valid in it (decoded strictly), so a
 * document always decodes in some ASCII-compatible encoding (windows-1252 last: every byte is a
 * character); what cannot be read at all (invalid UTF-16/32, EBCDIC) throws
 * FeedRefreshError('not_a_feed', 'cannot decode: …').
 */
import { FeedRefreshError } from './refresh-failure.js';

type Wide = 'utf-16be' | 'utf-16le' | 'utf-32be' | 'utf-32le';

export interface DecodedBody {
  text: string;
  /** The encoding the bytes were read in (WHATWG name, or utf-32be/le). */
  encoding: string;
  /** The text's UTF-8 bytes when the body is them (read as UTF-8: the body after its BOM), else null. */
  utf8: Uint8Array | null;
}

function cannotDecode(reason: string): FeedRefreshError {
  return new FeedRefreshError('not_a_feed', `cannot decode: ${reason}`);
}

/** The encoding a byte-order mark names, and its length. UTF-32LE's mark starts like UTF-16LE's: it is looked at first. */
function byteOrderMark(b: Uint8Array): { encoding: 'utf-8' | Wide; length: number } | null {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (b[0] === 0x00 && b[1] === 0x00 && b[2] === 0xfe && b[3] === 0xff) return { encoding: 'utf-32be', length: 4 };
  if (b[0] === 0xff && b[1] === 0xfe && b[2] === 0x00 && b[3] === 0x00) return { encoding: 'utf-32le', length: 4 };
  if (b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  if (b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  return null;
}

/**
 * The encoding family the first four bytes show without a BOM (XML 1.0 appendix F, for any
 * ASCII character first: a feed starts with `<`, `{` or whitespace): a wide encoding, EBCDIC
 * (`<?xm` as 4C 6F A7 94), or null for an ASCII-compatible one.
 */
function sniff(b: Uint8Array): Wide | 'ebcdic' | null {
  if (b.length < 4) return null;
  const [b0, b1, b2, b3] = [b[0]!, b[1]!, b[2]!, b[3]!];
  if (b0 === 0 && b1 === 0 && b2 === 0 && b3 !== 0 && b3 < 0x80) return 'utf-32be';
  if (b0 !== 0 && b0 < 0x80 && b1 === 0 && b2 === 0 && b3 === 0) return 'utf-32le';
  if (b0 === 0 && b1 !== 0 && b1 < 0x80 && b2 === 0 && b3 !== 0) return 'utf-16be';
  if (b0 !== 0 && b0 < 0x80 && b1 === 0 && b2 !== 0 && b3 === 0) return 'utf-16le';
  if (b0 === 0x4c && b1 === 0x6f && b2 === 0xa7 && b3 === 0x94) return 'ebcdic';
  return null;
}

function charsetFromContentType(contentType: string | null | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? '');
  return m?.[1];
}

function charsetFromXmlDeclaration(head: string): string | undefined {
  const m = /^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return m?.[1];
}

// windows-1252's characters at 0x80-0x9F (WHATWG; the five it leaves unassigned stay C1 controls).
const CP1252_HIGH =
  '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F' +
  '\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

/**
 * windows-1252 (also what the labels latin1, iso-8859-1 and us-ascii mean): Node 20's TextDecoder
 * reads it as ISO-8859-1, so that curly quotes, dashes and the euro sign (0x80-0x9F) would come
 * out as C1 control characters; they are mapped here.
 */
function decodeWindows1252(bytes: Uint8Array): string {
  const text = new TextDecoder('windows-1252').decode(bytes);
  return /[\u0080-\u009F]/.test(text) ? text.replace(/[\u0080-\u009F]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!) : text;
}

/** A strict decoder for a WHATWG label, or null when TextDecoder does not know it (UTF-32, EBCDIC, UTF-7, made-up names). */
function strictDecoder(label: string): TextDecoder | null {
  try {
    return new TextDecoder(label.trim().toLowerCase(), { fatal: true });
  } catch {
    return null;
  }
}

function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): string {
  if (bytes.byteLength % 4 !== 0)
    throw cannotDecode(`the bytes are not valid UTF-32${littleEndian ? 'LE' : 'BE'} (${bytes.byteLength} bytes, not a multiple of 4)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let chunk: number[] = [];
  for (let i = 0; i < bytes.byteLength; i += 4) {
    const cp = view.getUint32(i, littleEndian);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      throw cannotDecode(`the bytes are not valid UTF-32${littleEndian ? 'LE' : 'BE'} (0x${cp.toString(16).toUpperCase()} at byte ${i} is no character)`);
    chunk.push(cp);
    if (chunk.length === 8192) {
      parts.push(String.fromCodePoint(...chunk));
      chunk = [];
    }
  }
  parts.push(String.fromCodePoint(...chunk));
  return parts.join('');
}

function decodeWide(bytes: Uint8Array, encoding: Wide): DecodedBody {
  if (encoding === 'utf-32be' || encoding === 'utf-32le') return { text: decodeUtf32(bytes, encoding === 'utf-32le'), encoding, utf8: null };
  try {
    return { text: new TextDecoder(encoding, { fatal: true }).decode(bytes), encoding, utf8: null };
  } catch {
    throw cannotDecode(`the bytes are not valid ${encoding.toUpperCase()}`);
  }
}

export function decodeFeedBody(bytes: Uint8Array, contentType?: string | null): DecodedBody {
  const bom = byteOrderMark(bytes);
  if (bom && bom.encoding !== 'utf-8') return decodeWide(bytes.subarray(bom.length), bom.encoding);
  const family = bom ? null : sniff(bytes);
  if (family === 'ebcdic') throw cannotDecode('the document is in EBCDIC, an encoding this platform does not read');
  if (family) return decodeWide(bytes, family);

  // ASCII-compatible: the BOM, the header, the declaration, UTF-8, then windows-1252.
  const body = bom ? bytes.subarray(bom.length) : bytes;
  const declared = charsetFromXmlDeclaration(new TextDecoder('latin1').decode(body.subarray(0, 512)));
  const candidates = [bom?.encoding, charsetFromContentType(contentType), declared, 'utf-8'];
  for (const label of candidates) {
    const decoder = label ? strictDecoder(label) : null;
    // A UTF-16 label on bytes that are not UTF-16 (no BOM, no zero bytes) cannot be right.
    if (!decoder || decoder.encoding.startsWith('utf-16')) continue;
    if (decoder.encoding === 'windows-1252') break; // valid for any bytes: the last resort below
    try {
      // TextDecoder drops a UTF-8 BOM at the start: one left after ours (a second) would make the
      // text and the bytes differ, so the bytes are given only without one.
      const text = decoder.decode(body);
      const utf8 = decoder.encoding === 'utf-8' && byteOrderMark(body)?.encoding !== 'utf-8' ? body : null;
      return { text, encoding: decoder.encoding, utf8 };
    } catch {
      // not valid in this encoding: the next candidate
    }
  }
  return { text: decodeWindows1252(body), encoding: 'windows-1252', utf8: null };
}

const encoder = new TextEncoder();

/**
 * What a parser reads of a decoded body: its text without the whitespace and byte-order marks
 * ahead of the document, and that text's UTF-8 bytes when the body holds them (a subarray, no
 * copy), else null.
 */
export function documentSource(decoded: DecodedBody): { source: string; utf8: Uint8Array | null } {
  const source = decoded.text.replace(/^[\s\uFEFF]+/, '');
  if (!decoded.utf8) return { source, utf8: null };
  const removed = decoded.text.length - source.length;
  // What was removed is usually ASCII whitespace (a byte a character); measured exactly otherwise.
  return { source, utf8: decoded.utf8.subarray(removed === 0 ? 0 : encoder.encode(decoded.text.slice(0, removed)).length) };
}
