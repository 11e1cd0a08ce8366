/**
 * Classes a page failure as the reference does (marketplace-crawler.md 3.7): timeout, blocked,
 * network or unknown. Blocked, timeout and network failures count towards the proxy circuit
 * breaker; unknown ones (a bug, a changed page) say nothing about the proxy.
 */
import { PageBlockedError, PageHttpError, PageTimeoutError } from './crawl-errors.js';

export type CrawlErrorClass = 'timeout' | 'blocked' | 'network' | 'unknown';

const TIMEOUT_CODES = /net::ERR_(TIMED_OUT|CONNECTION_TIMED_OUT)\b/;
const NETWORK_CODES =
  /net::ERR_(CONNECTION_(REFUSED|RESET|CLOSED|ABORTED|FAILED)|EMPTY_RESPONSE|PROXY_\w+|TUNNEL_CONNECTION_FAILED|NAME_NOT_RESOLVED|NAME_RESOLUTION_FAILED|ADDRESS_UNREACHABLE|ADDRESS_INVALID|INTERNET_DISCONNECTED|NETWORK_CHANGED|NETWORK_ACCESS_DENIED|SOCKS_\w+|SSL_\w+|CERT_\w+|HTTP2_\w+|QUIC_\w+|INVALID_HTTP_RESPONSE|INCOMPLETE_CHUNKED_ENCODING|CONTENT_LENGTH_MISMATCH|RESPONSE_HEADERS_TRUNCATED)\b/;
const NODE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

export function classifyError(err: unknown): CrawlErrorClass {
  if (err instanceof PageBlockedError) return 'blocked';
  if (err instanceof PageTimeoutError) return 'timeout';
  if (err instanceof PageHttpError) return err.status >= 500 ? 'network' : 'unknown';
  if (!(err instanceof Error)) return 'unknown';
  // puppeteer's TimeoutError (navigation, waitFor*) and Node's own timeouts
  if (err.name === 'TimeoutError' || (err as NodeJS.ErrnoException).code === 'ETIMEDOUT') return 'timeout';
  if (TIMEOUT_CODES.test(err.message)) return 'timeout';
  if (NETWORK_CODES.test(err.message)) return 'network';
  if (NODE_NETWORK_CODES.has((err as NodeJS.ErrnoException).code ?? '')) return 'network';
  return 'unknown';
}

/** Whether a failure of this class says something about the proxy (reference: shouldActivateProxy). */
export function countsTowardsProxyBreaker(errorClass: CrawlErrorClass): boolean {
  return errorClass === 'blocked' || errorClass === 'timeout' || errorClass === 'network';
}
