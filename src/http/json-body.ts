/**
 * Reads a request's JSON body, for the routes that declare one (after the credential check, so
 * that no anonymous caller makes the API read a body).
 *
 * - No body at all (neither Content-Length nor Transfer-Encoding), or a Content-Type other than
 *   application/json or application/*+json: undefined (the route answers 400 "a JSON body is
 *   required"); the body is left unread.
 * - Content-Encoding other than identity: 415 `unsupported_encoding`; so is a charset other than
 *   UTF-8 (JSON is UTF-8, RFC 8259).
 * - Larger than the limit (HTTP_BODY_LIMIT): 413 `body_too_large`, from Content-Length before
 *   reading when it says so, else as soon as the bytes read pass the limit.
 * - Bytes that are not UTF-8: 400 `invalid_text` naming the field they are in (`items.0.text`,
 *   `(body)` outside any field), never decoded into U+FFFD and stored changed.
 * - Not JSON, JSON that is not an object or array at the top, or nested deeper than MAX_DEPTH:
 *   400 `malformed_json`. An empty body is `{}`.
 *
 * Header values are bytes too (node reads them as latin1): one that is not UTF-8 is a 400
 * `invalid_text` naming the header (`checkHeaderText`, made here for body routes and by the
 * credential check, authenticate.ts, for every authenticated route).
 *
 * When a body is refused, the rest of it is still read (and dropped) before the answer, so that a
 * client still sending gets its answer on the same connection rather than a reset.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/** Deeper JSON is refused: nothing the API takes nests this deep, and deeper values would only cost stack later (JSON.stringify recurses). */
export const MAX_DEPTH = 64;

const JSON_TYPE = /^application\/(?:json|[^/;\s]+\+json)$/;

function mediaType(contentType: string | undefined): { type: string; charset: string | undefined } | undefined {
  if (!contentType) return undefined;
  const [type, ...params] = contentType.split(';');
  let charset: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'charset')
      charset = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return { type: type!.trim().toLowerCase(), charset };
}

/** True when `text` (JSON) nests arrays and objects deeper than `max`; strings are skipped. */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

const malformed = () => new HttpError(400, 'malformed_json', 'the request body is not valid JSON', '(body)');

/** Parses a body's text as the API takes JSON: an object or array at the top, at most MAX_DEPTH deep. */
export function parseJsonText(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const first = /\S/.exec(body);
  if (!first) return {};
  if (first[0] !== '{' && first[0] !== '[') throw malformed();
  if (nestedDeeperThan(body, MAX_DEPTH)) throw new HttpError(400, 'malformed_json', `the request body nests deeper than ${MAX_DEPTH} levels`, '(body)');
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw malformed();
  }
}

/**
 * The offset of the first byte that does not belong to well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF, no cut sequence), or -1 when all of it does.
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // The sequence's length and the range its second byte must be in (the rest: 0x80-0xBF).
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k < n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n;
  }
  return -1;
}

/**
 * The field (`items.3.text`; `a.(key)` inside an object key; '' at the top) that JSON text being
 * read is in at the end of `prefix`: where a body's first invalid byte sits. A scan, not a parse:
 * it only tracks strings, brackets, keys and commas.
 */
export function jsonFieldAt(prefix: string): string {
  const stack: { array: boolean; index: number; key: string | undefined }[] = [];
  let stringStart = -1;
  let inKey = false;
  let wantKey = false;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    if (stringStart >= 0) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        if (inKey) {
          const raw = prefix.slice(stringStart, i + 1);
          let key: string;
          try {
            key = JSON.parse(raw) as string;
          } catch {
            key = raw.slice(1, -1);
          }
          stack.at(-1)!.key = key;
          wantKey = false;
        }
        stringStart = -1;
      }
      continue;
    }
    const top = stack.at(-1);
    if (c === 0x22) {
      stringStart = i;
      inKey = top !== undefined && !top.array && wantKey;
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ array: c === 0x5b, index: 0, key: undefined });
      wantKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      wantKey = false;
    } else if (c === 0x2c && top) {
      if (top.array) top.index++;
      else {
        top.key = undefined;
        wantKey = true;
      }
    }
  }
  const parts = stack.map((f) => (f.array ? String(f.index) : (f.key ?? '(key)')));
  if (stringStart >= 0 && inKey) parts[parts.length - 1] = '(key)';
  return parts.join('.');
}

/** A body whose bytes are not all UTF-8: 400 naming the field the first bad byte is in. */
function notUtf8(bytes: Buffer): HttpError {
  const at = invalidUtf8At(bytes);
  const field = jsonFieldAt(bytes.subarray(0, Math.max(0, at)).toString('utf8')) || '(body)';
  return new HttpError(400, 'invalid_text', `${field}: not valid UTF-8 (byte ${at} of the body)`, field);
}

const NON_ASCII = /[^\t\x20-\x7e]/;

/** 400 `invalid_text` naming the first header whose value is not UTF-8 (node hands header bytes over as latin1). */
export function checkHeaderText(headers: IncomingHttpHeaders): void {
  for (const name in headers) {
    const value = headers[name];
    for (const text of Array.isArray(value) ? value : [value]) {
      if (text !== undefined && NON_ASCII.test(text) && !isUtf8(Buffer.from(text, 'latin1'))) {
        throw new HttpError(400, 'invalid_text', `${name}: the header's value is not valid UTF-8`, name);
      }
    }
  }
}

/** Reads the rest of a refused body and drops it; resolves when the request has ended or closed. */
function drain(req: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (req.complete || req.destroyed) return resolve();
    req.removeAllListeners('data');
    req.on('end', resolve);
    req.on('close', resolve);
    req.resume();
  });
}

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const { headers } = req;
  try {
    checkHeaderText(headers);
  } catch (err) {
    await drain(req);
    throw err;
  }
  if (headers['transfer-encoding'] === undefined && headers['content-length'] === undefined) return undefined;
  const media = mediaType(headers['content-type']);
  if (!media || !JSON_TYPE.test(media.type)) return undefined;
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    await drain(req);
    throw new HttpError(415, 'unsupported_encoding', `unsupported content encoding "${encoding}"; send the body uncompressed`, '(body)');
  }
  if (media.charset !== undefined && media.charset !== 'utf-8' && media.charset !== 'utf8') {
    await drain(req);
    throw new HttpError(415, 'unsupported_encoding', `unsupported charset "${media.charset.toUpperCase()}"; JSON is UTF-8`, '(body)');
  }
  const tooLarge = () => new HttpError(413, 'body_too_large', `the request body exceeds the limit of ${limit} bytes`, '(body)');
  const declared = Number(headers['content-length']);
  if (declared > limit) {
    await drain(req);
    throw tooLarge();
  }
  const bytes = await new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
    // A client gone before the end: nobody is left to answer.
    req.once('close', () => {
      if (!req.complete) reject(new HttpError(400, 'request_aborted', 'the request body was not received completely', '(body)'));
    });
  });
  if (bytes === undefined) {
    await drain(req);
    throw tooLarge();
  }
  if (!isUtf8(bytes)) throw notUtf8(bytes);
  return parseJsonText(bytes.toString('utf8'));
}
