/**
 * The outbound policy (src/net/outbound-policy.ts) for the crawler's browser. Chromium opens its
 * own connections, so the check is made on every request it is about to send, by puppeteer
 * request interception (on a page fetchPage loads, every request but the resources Chromium
 * itself refuses first: resource-blocking.ts):
 *
 * - the operator's own site goes on unchecked: the trusted origins (CRAWL_BASE_URL's, or the
 *   embedded fixture marketplace's: scheme, host and port, so another port of the same host is
 *   not trusted). PROXY_LIST is the operator's choice too; Chromium's connection to a proxy is
 *   below the requests and is not seen here;
 * - data:, blob: and about: URLs open no connection and go on;
 * - any other http(s) or ws(s) request (a redirect off the site, a frame, a script, an XHR or a
 *   link to another host) goes on only when the policy allows its host: an IP literal as it is,
 *   a name by resolving it here and checking every address (resolveAllowed, as for feeds);
 * - anything else (file:, ftp:, chrome: ...) is refused.
 *
 * A refused request is aborted as `accessdenied` (a refused navigation fails the page with
 * net::ERR_ACCESS_DENIED); a name that does not resolve here is aborted as `namenotresolved`.
 * Both are reported to `onRefused` with the address and reason, for the log.
 *
 * Limit: Chromium resolves a name again for its own connection, so a name whose DNS answer
 * changes between the two lookups (rebinding with a zero TTL) is not caught here, where the feeds'
 * dispatcher does catch it; with a proxy, the proxy resolves names and this check is made on what
 * this machine resolves. Verdicts are kept per page (one lookup per host and page).
 */
import type { HTTPRequest, Page } from 'puppeteer';
import { resolveAllowed, systemResolver, type Resolver } from '../net/outbound-dispatcher.js';
import { DestinationNotAllowedError, type OutboundPolicy } from '../net/outbound-policy.js';

export interface RefusedRequest {
  url: string;
  /** Host → address: reason, or the lookup failure. */
  detail: string;
  navigation: boolean;
}

export interface RequestGuardOptions {
  policy: OutboundPolicy;
  /** Origins of the operator's own site (URLs; only their origin counts), reached unchecked. */
  trustedOrigins: string[];
  resolve?: Resolver;
  onRefused?: (refused: RefusedRequest) => void;
}

type Verdict = { ok: true } | { ok: false; abort: 'accessdenied' | 'namenotresolved'; detail: string };

const NO_CONNECTION = new Set(['data:', 'blob:', 'about:']);
const CHECKED = new Set(['http:', 'https:', 'ws:', 'wss:']);

export class RequestGuard {
  private readonly trusted: Set<string>;

  constructor(private readonly options: RequestGuardOptions) {
    this.trusted = new Set(options.trustedOrigins.map((u) => new URL(u).origin));
  }

  /** Whether a request for `url` may go out; `verdicts` caches host lookups. */
  async check(url: string, verdicts: Map<string, Promise<Verdict>> = new Map()): Promise<Verdict> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, abort: 'accessdenied', detail: 'not a URL' };
    }
    if (NO_CONNECTION.has(parsed.protocol)) return { ok: true };
    if (!CHECKED.has(parsed.protocol)) return { ok: false, abort: 'accessdenied', detail: `scheme ${parsed.protocol}` };
    if (this.trusted.has(parsed.origin)) return { ok: true };
    const host = parsed.hostname;
    let verdict = verdicts.get(host);
    if (!verdict) {
      verdict = resolveAllowed(this.options.policy, host, this.options.resolve ?? systemResolver).then(
        (): Verdict => ({ ok: true }),
        (err: Error): Verdict =>
          err instanceof DestinationNotAllowedError
            ? { ok: false, abort: 'accessdenied', detail: err.detail }
            : { ok: false, abort: 'namenotresolved', detail: `${host}: ${(err as { code?: string }).code ?? err.message}` },
      );
      verdicts.set(host, verdict);
    }
    return verdict;
  }

  /** Intercepts every request of `page` (call before its first navigation). */
  async install(page: Page): Promise<void> {
    const verdicts = new Map<string, Promise<Verdict>>();
    await page.setRequestInterception(true);
    page.on('request', (request) => void this.decide(request, verdicts));
  }

  private async decide(request: HTTPRequest, verdicts: Map<string, Promise<Verdict>>): Promise<void> {
    if (request.isInterceptResolutionHandled()) return;
    const url = request.url();
    const verdict = await this.check(url, verdicts);
    // The page may be closed meanwhile; its requests are gone with it.
    if (verdict.ok) return void (await request.continue().catch(() => undefined));
    this.options.onRefused?.({ url: url.slice(0, 500), detail: verdict.detail, navigation: request.isNavigationRequest() });
    await request.abort(verdict.abort).catch(() => undefined);
  }
}
