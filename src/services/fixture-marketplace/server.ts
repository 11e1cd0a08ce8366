/**
 * The fixture marketplace: a small HTTP server on 127.0.0.1 that looks like the real
 * marketplace to the crawler (same URL scheme and row markup, virtual-list result pages,
 * "no results" past the last page) and can be told to block, slow down or break
 * (behaviour.ts). Tests, benchmarks and the demo use it: a service the platform starts for
 * demos like the embedded Redis (src/runtime/crawler-role.ts serves one in-process for the
 * crawler role when CRAWL_SITE=fixture and CRAWL_BASE_URL=embedded).
 *
 * Control it in-process (catalog, behaviour, requests()) or over HTTP:
 *   GET  /__fixture/requests                     what was asked for (search requests, counts by kind)
 *   GET  /__fixture/items?keyword=&status=       the items of a keyword
 *   POST /__fixture/behaviour {rules: [...]}     replace the behaviour rules
 *   POST /__fixture/sell  {keyword, sourceIds}   items sell
 *   POST /__fixture/price {keyword, sourceId, price}
 *   POST /__fixture/list  {keyword, count}       new listings
 *   POST /__fixture/reset                        data, rules and request log back to the start
 *
 * Those routes exist only with `control: true` (tests and benchmarks, which start their own
 * marketplace). The one the platform serves for its demo (src/runtime/crawler-role.ts) has none:
 * anyone on the machine can reach its loopback port, and must not fake the crawl data. Memory is
 * bounded whatever is searched: keywords of at most MAX_KEYWORD_LENGTH characters, at most
 * `maxKeywords` of them kept (catalog.ts), the request log capped at SEARCH_LOG_LIMIT entries.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { z } from 'zod';
import { BehaviourRules, behaviourRule, type BehaviourRule, type FixtureMode, type SearchRequestInfo } from './behaviour.js';
import { FixtureCatalog, type CatalogOptions } from './catalog.js';
import { renderCaptcha, renderForbidden, renderHome, renderItem, renderNoResults, renderRateLimited, renderResults, renderServerError } from './render.js';

export interface FixtureMarketplaceOptions extends CatalogOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Height of a result row in pixels (default 64). */
  rowHeight?: number;
  rules?: BehaviourRule[];
  /** Serve the /__fixture/ control routes (default true); the platform's embedded demo marketplace has none. */
  control?: boolean;
}

/** Longest keyword searched, in characters (an IP's keyword is at most as long); a longer one is answered 400. */
export const MAX_KEYWORD_LENGTH = 200;

export type RequestKind = 'home' | 'search' | 'item' | 'image' | 'font' | 'analytics' | 'captcha' | 'admin' | 'other';

export interface SearchRequestRecord extends SearchRequestInfo {
  mode: FixtureMode;
  at: number;
}

export interface RequestLog {
  counts: Record<RequestKind, number>;
  search: SearchRequestRecord[];
}

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const ANALYTICS_JS = 'navigator.sendBeacon && navigator.sendBeacon("/analytics/collect", "pageview");';
const SEARCH_LOG_LIMIT = 10_000;

const sellBody = z.object({ keyword: z.string().min(1), sourceIds: z.array(z.string().min(1)) });
const priceBody = z.object({ keyword: z.string().min(1), sourceId: z.string().min(1), price: z.number().int().min(0) });
const listBody = z.object({ keyword: z.string().min(1), count: z.number().int().min(1).max(10_000) });
const rulesBody = z.object({ rules: z.array(behaviourRule) });

function emptyCounts(): Record<RequestKind, number> {
  return { home: 0, search: 0, item: 0, image: 0, font: 0, analytics: 0, captcha: 0, admin: 0, other: 0 };
}

export class FixtureMarketplace {
  readonly catalog: FixtureCatalog;
  readonly behaviour = new BehaviourRules();
  private log: RequestLog = { counts: emptyCounts(), search: [] };
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    catalog: FixtureCatalog,
    private readonly rowHeight: number,
    private readonly control: boolean,
  ) {
    this.catalog = catalog;
  }

  static async start(options: FixtureMarketplaceOptions = {}): Promise<FixtureMarketplace> {
    const host = options.host ?? '127.0.0.1';
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const market = new FixtureMarketplace(server, `http://${host}:${port}`, new FixtureCatalog(options), options.rowHeight ?? 64, options.control ?? true);
    if (options.rules) market.behaviour.set(options.rules);
    server.on('connection', (socket) => {
      market.sockets.add(socket);
      socket.once('close', () => market.sockets.delete(socket));
    });
    server.on('request', (req, res) => market.handle(req, res));
    return market;
  }

  /** What was requested since the start (or the last clearRequests). */
  requests(): RequestLog {
    return { counts: { ...this.log.counts }, search: [...this.log.search] };
  }

  clearRequests(): void {
    this.log = { counts: emptyCounts(), search: [] };
  }

  /** Closes the server, its connections and pending slow answers. Idempotent. */
  stop(): Promise<void> {
    return (this.stopping ??= new Promise<void>((resolve) => {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    }));
  }

  private count(kind: RequestKind): void {
    this.log.counts[kind] += 1;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const path = url.pathname;
    res.setHeader('cache-control', 'no-store');
    if (path.startsWith('/__fixture/') && this.control) {
      this.count('admin');
      void this.admin(req, res, url).catch((err: Error) => json(res, 400, { error: err.message }));
      return;
    }
    if (path === '/') {
      this.count('home');
      return html(res, 200, renderHome());
    }
    if (path === '/search') return this.search(req, res, url);
    if (path.startsWith('/item/')) {
      this.count('item');
      const id = decodeURIComponent(path.slice('/item/'.length));
      const item = this.catalog.find(id);
      return html(res, item ? 200 : 404, renderItem(item, id));
    }
    if (path.startsWith('/img/')) {
      this.count('image');
      res.writeHead(200, { 'content-type': 'image/gif' });
      return void res.end(PIXEL);
    }
    if (path.startsWith('/fonts/')) {
      this.count('font');
      res.writeHead(200, { 'content-type': 'font/woff2' });
      return void res.end(Buffer.alloc(64));
    }
    if (path.startsWith('/analytics')) {
      this.count('analytics');
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return void res.end(ANALYTICS_JS);
    }
    if (path.startsWith('/captcha/')) {
      this.count('captcha');
      return html(res, 200, '<p>captcha challenge</p>');
    }
    this.count('other');
    html(res, 404, '<h1>Not found</h1>');
  }

  private search(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    this.count('search');
    const keyword = url.searchParams.get('keyword') ?? '';
    if ([...keyword].length > MAX_KEYWORD_LENGTH) return html(res, 400, '<h1>Keyword too long</h1>');
    const status = url.searchParams.get('status') === 'sold_out' ? 'sold' : 'on_sale';
    const page = Math.max(1, Number.parseInt(url.searchParams.get('page') ?? '1', 10) || 1);
    const forwarded = String(req.headers['x-forwarded-for'] ?? '')
      .split(',')[0]
      ?.trim();
    const info: SearchRequestInfo = { keyword, status, page, clientIp: forwarded || req.socket.remoteAddress || '' };
    const rule = this.behaviour.pick(info);
    const mode = rule?.mode ?? 'normal';
    if (this.log.search.length < SEARCH_LOG_LIMIT) this.log.search.push({ ...info, mode, at: Date.now() });

    const answer = () => {
      if (!keyword) return html(res, 200, renderNoResults(''));
      this.catalog.trade(keyword, Date.now());
      const items = this.catalog.page(keyword, status, page);
      if (items.length === 0) return html(res, 200, renderNoResults(keyword));
      html(res, 200, renderResults({ keyword, status, page, items, rowHeight: this.rowHeight }));
    };
    switch (mode) {
      case 'forbidden':
        return html(res, 403, renderForbidden());
      case 'rate-limited':
        res.setHeader('retry-after', '30');
        return html(res, 429, renderRateLimited());
      case 'captcha':
        return html(res, 200, renderCaptcha());
      case 'server-error':
        return html(res, 500, renderServerError());
      case 'broken':
        // the connection drops before any answer: the browser sees an empty response
        req.socket.destroy();
        return;
      case 'slow': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (!res.destroyed) answer();
        }, rule?.delayMs ?? 5000);
        this.timers.add(timer);
        return;
      }
      default:
        return answer();
    }
  }

  private async admin(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /__fixture/requests') return json(res, 200, this.requests());
    if (route === 'GET /__fixture/items') {
      const keyword = url.searchParams.get('keyword') ?? '';
      const status = url.searchParams.get('status') === 'sold' ? 'sold' : 'on_sale';
      return json(res, 200, { items: this.catalog.items(keyword, status) });
    }
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    switch (route) {
      case 'POST /__fixture/behaviour':
        this.behaviour.set(rulesBody.parse(body).rules);
        return json(res, 200, { rules: this.behaviour.list() });
      case 'POST /__fixture/sell': {
        const b = sellBody.parse(body);
        return json(res, 200, { sold: this.catalog.sell(b.keyword, b.sourceIds) });
      }
      case 'POST /__fixture/price': {
        const b = priceBody.parse(body);
        return json(res, this.catalog.setPrice(b.keyword, b.sourceId, b.price) ? 200 : 404, {});
      }
      case 'POST /__fixture/list': {
        const b = listBody.parse(body);
        return json(res, 200, { items: this.catalog.list(b.keyword, b.count) });
      }
      case 'POST /__fixture/reset':
        this.catalog.reset();
        this.behaviour.set([]);
        this.clearRequests();
        return json(res, 200, {});
      default:
        return json(res, 404, { error: `no admin route ${route}` });
    }
  }
}

function html(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(body);
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 1_000_000) throw new Error('body too large');
  }
  return text ? JSON.parse(text) : {};
}
