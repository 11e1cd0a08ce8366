/**
 * One polite HTTP GET of a feed: conditional (If-None-Match / If-Modified-Since), a real
 * User-Agent, redirects followed by hand up to a cap (loops detected), one timeout over the whole
 * exchange (every hop and the body), the body streamed with a size cap (Content-Length checked
 * first; decompressed bytes counted, so a zip bomb stops at the cap too). Failures are thrown as
 * FeedRefreshError with their class (see refresh-failure.ts); 429/503 carry Retry-After.
 *
 * Every connection, the first and each redirect hop's, goes through the caller's dispatcher: the
 * outbound policy (src/net/outbound-dispatcher.ts) refuses private destinations at connect time.
 * Before a hop to another host than the previous one's, `beforeHostChange` is awaited (the caller
 * ends its turn on the old host and waits for the new host's); the timeout does not run meanwhile.
 *
 * Uses no Redis and no database; the domain spacing and the lock are the caller's.
 */
import { fetch, type Dispatcher, type Response } from 'undici';
import { classifyFetchError, classifyStatus, FeedRefreshError, parseRetryAfter } from './refresh-failure.js';
export interface FetchFeedOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Longest Retry-After honoured. */
  maxRetryAfterMs: number;
  etag?: string | null;
  lastModified?: string | null;
  /** Aborts the request (the refresh's time limit). */
  signal?: AbortSignal;
  /** Opens every connection; the outbound policy lives here. */
  dispatcher: Dispatcher;
  /** Awaited before a request to another host than the previous request's (host names, lower case). */
  beforeHostChange?: (from: string, to: string) => Promise<void>;
}

export type FetchFeedResult =
  | { kind: 'not_modified'; status: 304; finalUrl: string; redirects: number }
  | {
      kind: 'fetched';
      status: number;
      finalUrl: string;
      redirects: number;
      body: Uint8Array;
      contentType: string | null;
      /** The Content-Location header: the document's base URL when it is one (parse-feed.ts). */
      contentLocation: string | null;
      etag: string | null;
      lastModified: string | null;
    };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT =
  'application/rss+xml, application/atom+xml, application/feed+json, application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5';

function httpUrl(value: string, base?: string): URL {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    throw new FeedRefreshError('invalid_url', `not a URL: ${value.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FeedRefreshError('invalid_url', `unsupported scheme ${url.protocol}`);
  return url;
}

async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

async function readCapped(res: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(res);
    throw new FeedRefreshError('too_large', `Content-Length ${declared} exceeds the limit of ${maxBytes} bytes`, { httpStatus: res.status });
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new FeedRefreshError('too_large', `body exceeds the limit of ${maxBytes} bytes`, { httpStatus: res.status });
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    body.set(c, offset);
    offset += c.byteLength;
  }
  return body;
}

/** The fetch timeout: one budget for every hop and the body, paused while waiting for another host's turn. */
class FetchDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  private running = false;

  constructor(ms: number) {
    this.left = ms;
    this.resume();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  resume(): void {
    if (this.running) return;
    this.running = true;
    this.since = performance.now();
    this.timer = setTimeout(() => this.controller.abort(new DOMException('the fetch timed out', 'TimeoutError')), Math.max(0, this.left));
  }

  pause(): void {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    this.left -= performance.now() - this.since;
  }
}

export async function fetchFeed(feedUrl: string, options: FetchFeedOptions): Promise<FetchFeedResult> {
  const deadline = new FetchDeadline(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: ACCEPT };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;

  let url = httpUrl(feedUrl);
  // Credentials in the feed URL become Basic auth, sent to that origin only (not after a
  // redirect elsewhere); fetch refuses URLs that carry them.
  const origin = url.origin;
  const basic =
    url.username || url.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : undefined;
  url.username = '';
  url.password = '';
  const visited = new Set<string>([url.href]);
  // Whether the current hop's server has answered (status and headers): failures before that are
  // connection failures, whatever their cause (see classifyFetchError).
  let answered = false;
  let host = url.hostname;
  try {
    for (let redirects = 0; ; redirects++) {
      if (url.hostname !== host && options.beforeHostChange) {
        deadline.pause();
        try {
          await options.beforeHostChange(host, url.hostname);
        } finally {
          deadline.resume();
        }
      }
      host = url.hostname;
      answered = false;
      const res = await fetch(url, {
        headers: basic && url.origin === origin ? { ...headers, authorization: basic } : headers,
        redirect: 'manual',
        signal,
        dispatcher: options.dispatcher,
      });
      answered = true;
      if (REDIRECTS.has(res.status)) {
        await discard(res);
        const location = res.headers.get('location');
        if (!location) throw new FeedRefreshError('invalid_url', `HTTP ${res.status} without a Location`, { httpStatus: res.status });
        const next = httpUrl(location, url.href);
        next.username = '';
        next.password = '';
        if (visited.has(next.href)) throw new FeedRefreshError('too_many_redirects', `redirect loop at ${next.href}`, { httpStatus: res.status });
        if (redirects + 1 > options.maxRedirects)
          throw new FeedRefreshError('too_many_redirects', `more than ${options.maxRedirects} redirects`, { httpStatus: res.status });
        visited.add(next.href);
        url = next;
        continue;
      }
      if (res.status === 304) {
        await discard(res);
        return { kind: 'not_modified', status: 304, finalUrl: url.href, redirects };
      }
      if (res.status < 200 || res.status >= 300) {
        await discard(res);
        const retryAfterMs =
          res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after'), Date.now(), options.maxRetryAfterMs) : undefined;
        const failure = res.status === 503 && retryAfterMs !== undefined ? 'rate_limited' : classifyStatus(res.status);
        throw new FeedRefreshError(failure, `HTTP ${res.status}${retryAfterMs !== undefined ? ` (Retry-After ${Math.round(retryAfterMs / 1000)} s)` : ''}`, {
          httpStatus: res.status,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        });
      }
      const body = await readCapped(res, options.maxBytes);
      return {
        kind: 'fetched',
        status: res.status,
        finalUrl: url.href,
        redirects,
        body,
        contentType: res.headers.get('content-type'),
        contentLocation: res.headers.get('content-location'),
        etag: res.headers.get('etag'),
        lastModified: res.headers.get('last-modified'),
      };
    }
  } catch (err) {
    throw classifyFetchError(err, { timedOut: deadline.expired, answered });
  } finally {
    deadline.pause();
  }
}
