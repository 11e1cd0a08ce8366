/**
 * Bytes of a feed response → text. Pure. The charset comes from, in order: a byte-order mark,
 * the Content-Type charset, the XML declaration's encoding, else UTF-8. Unknown labels fall back
 * to UTF-8; undecodable bytes become U+FFFD rather than failing the refresh.
 */

function charsetFromContentType(contentType: string | null | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m?.[1];
}

function charsetFromXmlDeclaration(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 256));
  const m = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head);
  return m?.[1];
}

function decoderFor(label: string | undefined): TextDecoder {
  if (label) {
    try {
      return new TextDecoder(label.toLowerCase());
    } catch {
      // unknown label: fall through to UTF-8
    }
  }
  return new TextDecoder('utf-8');
}

export function decodeFeedBody(bytes: Uint8Array, contentType?: string | null): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return decoderFor(charsetFromContentType(contentType) ?? charsetFromXmlDeclaration(bytes)).decode(bytes);
}
