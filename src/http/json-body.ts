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
 * - Not JSON, JSON that is not an object or array at the top, or nested deeper than MAX_DEPTH:
 *   400 `malformed_json`. An empty body is `{}`.
 *
 * When a body is refused, the rest of it is still read (and dropped) before the answer, so that a
 * client still sending gets its answer on the same connection rather than a reset.
 */
import type { IncomingMessage } from 'node:http';
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
  const text = await new Promise<string | undefined>((resolve, reject) => {
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
    req.once('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    req.once('error', reject);
    // A client gone before the end: nobody is left to answer.
    req.once('close', () => {
      if (!req.complete) reject(new HttpError(400, 'request_aborted', 'the request body was not received completely', '(body)'));
    });
  });
  if (text === undefined) {
    await drain(req);
    throw tooLarge();
  }
  return parseJsonText(text);
}
