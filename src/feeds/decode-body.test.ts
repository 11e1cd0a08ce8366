import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeFeedBody, documentSource } from './decode-body.js';
import { FeedRefreshError } from './refresh-failure.js';

const FEEDPARSER = new URL('../../test/fixtures/feeds/documents/feedparser/', import.meta.url);
const bytes = (s: string) => new TextEncoder().encode(s);
const DOC = '<?xml version="1.0" encoding="ENC"?><rss><channel><title>Größe 日本 𝄞</title></channel></rss>';

/** `text` in UTF-16 or UTF-32, big- or little-endian, with or without a BOM (Buffer has neither UTF-16BE nor UTF-32). */
function encode(text: string, encoding: 'utf-16be' | 'utf-16le' | 'utf-32be' | 'utf-32le', bom: boolean): Uint8Array {
  const withBom = (bom ? '\uFEFF' : '') + text;
  if (encoding === 'utf-16le') return Buffer.from(withBom, 'utf16le');
  if (encoding === 'utf-16be') return Buffer.from(withBom, 'utf16le').swap16();
  const points = [...withBom].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((cp, i) => (encoding === 'utf-32le' ? out.writeUInt32LE(cp, i * 4) : out.writeUInt32BE(cp, i * 4)));
  return out;
}

function refusal(run: () => unknown): FeedRefreshError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(FeedRefreshError);
    return e as FeedRefreshError;
  }
  throw new Error('not refused');
}

describe('decodeFeedBody', () => {
  it.each([
    ['utf-16be', true],
    ['utf-16be', false],
    ['utf-16le', true],
    ['utf-16le', false],
    ['utf-32be', true],
    ['utf-32be', false],
    ['utf-32le', true],
    ['utf-32le', false],
  ] as const)('reads %s (byte-order mark: %s), whatever byte order the declaration names or not', (encoding, bom) => {
    for (const declared of [encoding.slice(0, 6), 'utf-16be', 'utf-16le', 'iso-8859-1']) {
      const doc = DOC.replace('ENC', declared);
      expect(decodeFeedBody(encode(doc, encoding, bom), null)).toMatchObject({ text: doc, encoding });
    }
  });

  it("reads every UTF-16 and UTF-32 document of the Universal Feed Parser's tests in the encoding it expects", () => {
    for (const file of ['utf-16be-bom', 'utf-16be', 'utf-16be-autodetect', 'utf-16le-bom', 'utf-16le', 'utf-16le-autodetect'].concat([
      'utf-32be-bom',
      'utf-32be',
      'utf-32be-autodetect',
      'utf-32le-bom',
      'utf-32le',
      'utf-32le-autodetect',
    ])) {
      const { text, encoding } = decodeFeedBody(readFileSync(new URL(`${file}.xml`, FEEDPARSER)), 'application/xml');
      expect(text, file).toMatch(/^<\?xml version="1.0" encoding="utf-(16|32)(be|le)?"\?>\n<!--[\s\S]*-->\n<rss>\n<\/rss>$/);
      expect(encoding, file).toBe(file.slice(0, 8));
      expect(text).toContain(`encoding == '${encoding}'`); // the test's own expectation, in its comment
    }
  });

  it('takes the BOM first, then the HTTP charset, then the XML declaration, then UTF-8', () => {
    const latin1Declared = (body: number[]) => Uint8Array.from([...bytes('<?xml version="1.0" encoding="ISO-8859-1"?><t>'), ...body, ...bytes('</t>')]);
    const e9 = latin1Declared([0xc3, 0xa9]); // "é" in UTF-8, or "Ã©" in Latin-1
    // 1. the BOM, over the header and the declaration
    expect(decodeFeedBody(Uint8Array.from([0xef, 0xbb, 0xbf, ...e9]), 'application/xml; charset=windows-1252')).toMatchObject({ encoding: 'utf-8' });
    expect(decodeFeedBody(encode('<a>é</a>', 'utf-16le', true), 'application/xml; charset=utf-8')).toMatchObject({ text: '<a>é</a>', encoding: 'utf-16le' });
    // 2. the header, over the declaration
    expect(decodeFeedBody(e9, 'application/rss+xml; charset="utf-8"').text).toContain('<t>é</t>');
    expect(decodeFeedBody(e9, "text/xml;charset='UTF-8'").text).toContain('<t>é</t>');
    // 3. the declaration, when the header names no charset
    expect(decodeFeedBody(e9, 'application/xml')).toMatchObject({ encoding: 'windows-1252' });
    expect(decodeFeedBody(e9, null).text).toContain('<t>Ã©</t>');
    // 4. UTF-8 when nothing says
    expect(decodeFeedBody(bytes('<t>é</t>'), null)).toMatchObject({ text: '<t>é</t>', encoding: 'utf-8' });
    expect(decodeFeedBody(Uint8Array.from([0xe9]), 'text/xml; charset=windows-1252').text).toBe('é');
  });

  it('skips a label that is unknown, cannot be the document, or that the bytes are not valid in', () => {
    const latin1 = Uint8Array.from([...bytes('<?xml version="1.0" encoding="iso-8859-1"?><t>'), 0xe9, 0x80, 0x93, 0x94, 0x97, ...bytes('</t>')]);
    // served as UTF-8, written in windows-1252 (which iso-8859-1 means): the declaration reads it right, curly quotes included
    expect(decodeFeedBody(latin1, 'text/xml; charset=utf-8')).toMatchObject({ text: expect.stringContaining('<t>é€“”—</t>'), encoding: 'windows-1252' });
    // unknown labels, and UTF-16 named for bytes that are not: UTF-8
    expect(decodeFeedBody(bytes('<t>ok é</t>'), 'text/xml; charset=no-such-charset')).toMatchObject({ text: '<t>ok é</t>', encoding: 'utf-8' });
    expect(decodeFeedBody(bytes('<?xml version="1.0" encoding="bogus"?><t/>'), null).encoding).toBe('utf-8');
    expect(decodeFeedBody(bytes('<?xml version="1.0" encoding="utf-16"?><t>é</t>'), 'application/xml; charset=utf-16')).toMatchObject({ encoding: 'utf-8' });
    // nothing valid: windows-1252, where every byte is a character
    expect(decodeFeedBody(Uint8Array.from([0x3c, 0x74, 0x3e, 0xe9, 0xff, 0x3c, 0x2f, 0x74, 0x3e]), 'text/xml; charset=utf-8')).toMatchObject({
      text: '<t>éÿ</t>',
      encoding: 'windows-1252',
    });
  });

  it('reads a UTF-16 document without BOM in the byte order of its bytes, whatever the header says', () => {
    const doc = DOC.replace('ENC', 'utf-16');
    expect(decodeFeedBody(encode(doc, 'utf-16be', false), 'application/xml; charset=utf-16le')).toMatchObject({ text: doc, encoding: 'utf-16be' });
    expect(decodeFeedBody(encode(doc, 'utf-16le', false), 'application/xml; charset=utf-8')).toMatchObject({ text: doc, encoding: 'utf-16le' });
    // also without a declaration, and JSON
    expect(decodeFeedBody(encode('  {"version": 1}', 'utf-16be', false), null)).toMatchObject({ text: '  {"version": 1}', encoding: 'utf-16be' });
  });

  it('refuses what it cannot read, saying why', () => {
    const ebcdic = Uint8Array.from([0x4c, 0x6f, 0xa7, 0x94, 0x93, 0x40]); // "<?xml " in EBCDIC
    expect(refusal(() => decodeFeedBody(ebcdic, null)).summary).toBe(
      'not_a_feed: cannot decode: the document is in EBCDIC, an encoding this platform does not read',
    );
    const beyond = Uint8Array.from([0x00, 0x00, 0xfe, 0xff, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x11, 0x00, 0x00]);
    expect(refusal(() => decodeFeedBody(beyond, null)).message).toBe('cannot decode: the bytes are not valid UTF-32BE (0x110000 at byte 4 is no character)');
    const surrogate = Uint8Array.from([0xff, 0xfe, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x00, 0x00, 0xd8, 0x00, 0x00]);
    expect(refusal(() => decodeFeedBody(surrogate, null)).message).toMatch(/^cannot decode: the bytes are not valid UTF-32LE \(0xD800 at byte 4/);
    const truncated = Uint8Array.from([0x00, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x00]);
    expect(refusal(() => decodeFeedBody(truncated, null)).message).toMatch(/not valid UTF-32BE \(7 bytes, not a multiple of 4\)/);
    const lone = Uint8Array.from([0x00, 0x3c, 0x00, 0x61, 0xdc, 0x00, 0x00, 0x3e]); // "<a", an unpaired low surrogate, ">"
    expect(refusal(() => decodeFeedBody(lone, null)).message).toBe('cannot decode: the bytes are not valid UTF-16BE');
  });

  it('gives the bytes of the text when the body is them: UTF-8 after its BOM, else none', () => {
    const doc = bytes(DOC.replace('ENC', 'utf-8'));
    const plain = decodeFeedBody(doc, null);
    expect(plain.utf8).toBe(doc);
    const withBom = Uint8Array.from([0xef, 0xbb, 0xbf, ...doc]);
    expect(decodeFeedBody(withBom, null).utf8).toEqual(doc);
    // A second BOM is dropped from the text by the decoder: the bytes would not be the text's.
    const twoBoms = Uint8Array.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, ...doc]);
    expect(decodeFeedBody(twoBoms, null)).toMatchObject({ encoding: 'utf-8', utf8: null });
    expect(decodeFeedBody(encode(DOC, 'utf-16le', true), null).utf8).toBeNull();
    expect(decodeFeedBody(Uint8Array.from([0x3c, 0x74, 0x3e, 0xe9, 0x3c, 0x2f, 0x74, 0x3e]), 'text/xml; charset=iso-8859-1').utf8).toBeNull();
  });
});

describe('documentSource', () => {
  it('is the text without what precedes the document, with exactly its UTF-8 bytes whenever it has bytes', () => {
    const doc = DOC.replace('ENC', 'utf-8');
    const bodies = [
      bytes(doc),
      bytes(`\n\r\t  ${doc}`),
      bytes(`\u00a0\u2003 \n${doc}`), // Unicode spaces: more bytes than characters
      bytes(`\ufeff\ufeff${doc}`), // BOMs: the first is the decoder's, the second text
      bytes(`\ufeff \ufeff\n${doc}`),
      bytes('   '),
      encode(`  ${doc}`, 'utf-16be', true),
      Uint8Array.from([0x20, 0x0a, 0x3c, 0x74, 0x3e, 0xe9, 0x3c, 0x2f, 0x74, 0x3e]), // windows-1252
    ];
    let withBytes = 0;
    for (const body of bodies) {
      const decoded = decodeFeedBody(body, null);
      const { source, utf8 } = documentSource(decoded);
      expect(source).toBe(decoded.text.replace(/^[\s\uFEFF]+/, ''));
      if (utf8 === null) continue;
      withBytes++;
      expect(Buffer.from(utf8).equals(Buffer.from(bytes(source))), JSON.stringify(decoded.text.slice(0, 8))).toBe(true);
    }
    expect(withBytes).toBe(5);
  });
});
