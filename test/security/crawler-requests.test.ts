/**
 * The outbound policy in the crawler's browser (src/crawl/request-guard.ts), in real headless
 * Chromium. The operator's site is http://127.0.0.2:<port> (trusted, as CRAWL_BASE_URL would be);
 * 127.0.0.3 is opened by OUTBOUND_ALLOW and stands for a public host; 127.0.0.1 plays a
 * loopback-only service. The site's pages lead the browser off the site in every way a page can:
 * a redirect, a frame, a script, an image, fetch(), and another port of the site's own host. On a
 * page with its resources blocked (as fetchPage loads one), the image is refused inside Chromium
 * before the policy is asked: the two never decide the same request.
 *
 * Addresses outside loopback are checked with RequestGuard.check and a stub resolver only: no
 * browser is ever pointed at them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserManager } from '../../src/crawl/browser-manager.js';
import { CrawlMetrics } from '../../src/crawl/crawl-metrics.js';
import { RequestGuard, type RefusedRequest } from '../../src/crawl/request-guard.js';
import { enableResourceBlocking } from '../../src/crawl/resource-blocking.js';
import { silentLogger } from '../../src/logging/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { OutboundPolicy } from '../../src/net/outbound-policy.js';

interface Recorder {
  server: http.Server;
  port: number;
  paths: string[];
}

async function serve(host: string, handler: (req: http.IncomingMessage, res: http.ServerResponse, base: string) => void): Promise<Recorder> {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res, `http://${req.headers.host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, paths };
}

describe("the crawler's browser reaches only the operator's site and what the policy allows", () => {
  let site: Recorder;
  let sitePort2: Recorder;
  let secret: Recorder;
  let open: Recorder;
  let browsers: BrowserManager;
  let profileRoot: string;
  const refused: RefusedRequest[] = [];

  beforeAll(async () => {
    secret = await serve('127.0.0.1', (_req, res) => res.end('secret'));
    open = await serve('127.0.0.3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
      res.end('open');
    });
    sitePort2 = await serve('127.0.0.2', (_req, res) => res.end('other port'));
    const s = `http://127.0.0.1:${secret.port}`;
    site = await serve('127.0.0.2', (req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${s}/redirected` });
        return res.end();
      }
      if (req.url === '/redirect-open') {
        res.writeHead(302, { location: `http://127.0.0.3:${open.port}/landed` });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!DOCTYPE html><html><head><title>site</title><script src="http://localhost:${secret.port}/script.js"></script></head><body>
<iframe src="${s}/frame"></iframe><img src="${s}/pixel.gif">
<script>
  window.done = Promise.allSettled([
    fetch('${s}/api'),
    fetch('http://127.0.0.2:${sitePort2.port}/other-port'),
    fetch('http://127.0.0.3:${open.port}/xhr').then((r) => r.text()),
  ]).then((rs) => rs.map((r) => r.status));
</script></body></html>`);
    });
    profileRoot = mkdtempSync(path.join(os.tmpdir(), 'wp-test-chromium-'));
    browsers = new BrowserManager({
      chromiumPath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium',
      profileRoot,
      maxPages: 2,
      pagesPerBrowser: 100,
      drainTimeoutMs: 10_000,
      protocolTimeoutMs: 30_000,
      logger: silentLogger(),
      metrics: new CrawlMetrics(new Metrics({ defaultMetrics: false })),
      requestGuard: new RequestGuard({
        policy: OutboundPolicy.fromEntries(['127.0.0.3']),
        trustedOrigins: [`http://127.0.0.2:${site.port}/`],
        onRefused: (r) => refused.push(r),
      }),
    });
  });
  afterAll(async () => {
    await browsers?.close();
    for (const r of [site, sitePort2, secret, open]) if (r) await new Promise((resolve) => r.server.close(resolve));
    if (profileRoot) rmSync(profileRoot, { recursive: true, force: true });
  });

  async function inPage<T>(work: (page: import('puppeteer').Page) => Promise<T>): Promise<T> {
    const lease = await browsers.openPage(null);
    try {
      return await work(lease.page);
    } finally {
      await lease.release();
    }
  }

  it("a page of the site loads; its frame, script, image and fetch() to loopback and to another port of the site's host are refused; the allowed host is reached", async () => {
    const statuses = await inPage(async (page) => {
      const res = await page.goto(`http://127.0.0.2:${site.port}/page`, { waitUntil: 'load' });
      expect(res?.status()).toBe(200);
      return page.evaluate('window.done') as Promise<string[]>;
    });
    expect(statuses).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(secret.paths).toEqual([]);
    expect(sitePort2.paths).toEqual([]);
    expect(open.paths).toEqual(['/xhr']);
    expect(refused.map((r) => r.detail).sort()).toEqual(
      [
        '127.0.0.1 → 127.0.0.1: loopback', // frame
        '127.0.0.1 → 127.0.0.1: loopback', // image
        '127.0.0.1 → 127.0.0.1: loopback', // fetch
        '127.0.0.2 → 127.0.0.2: loopback', // the other port
        expect.stringMatching(/^localhost → (127\.0\.0\.1|::1): loopback$/), // script
      ].sort(),
    );
  });

  it('on a page with its resources blocked, as fetchPage loads one, Chromium refuses the image before the policy sees it; the rest is judged as before', async () => {
    refused.length = 0;
    const statuses = await inPage(async (page) => {
      await enableResourceBlocking(page);
      await page.goto(`http://127.0.0.2:${site.port}/page`, { waitUntil: 'load' });
      return page.evaluate('window.done') as Promise<string[]>;
    });
    expect(statuses).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(secret.paths).toEqual([]);
    expect(sitePort2.paths).toEqual([]);
    // pixel.gif matches a blocked pattern: refused inside Chromium, it never reaches the request guard.
    expect(refused.map((r) => r.detail).sort()).toEqual(
      [
        '127.0.0.1 → 127.0.0.1: loopback', // frame
        '127.0.0.1 → 127.0.0.1: loopback', // fetch
        '127.0.0.2 → 127.0.0.2: loopback', // the other port
        expect.stringMatching(/^localhost → (127\.0\.0\.1|::1): loopback$/), // script
      ].sort(),
    );
    expect(refused.map((r) => r.url)).not.toContainEqual(expect.stringMatching(/pixel\.gif$/));
  });

  it('a redirect off the site to loopback is refused: the navigation fails and nothing reaches the service', async () => {
    refused.length = 0;
    const err = await inPage((page) =>
      page.goto(`http://127.0.0.2:${site.port}/redirect`).then(
        () => undefined,
        (e: Error) => e,
      ),
    );
    expect(err?.message).toMatch(/ERR_ACCESS_DENIED/);
    expect(secret.paths).toEqual([]);
    expect(refused).toEqual([{ url: `http://127.0.0.1:${secret.port}/redirected`, detail: '127.0.0.1 → 127.0.0.1: loopback', navigation: true }]);
  });

  it('a redirect off the site to an allowed host is followed', async () => {
    const text = await inPage(async (page) => {
      await page.goto(`http://127.0.0.2:${site.port}/redirect-open`);
      return page.evaluate('document.body.innerText');
    });
    expect(text).toBe('open');
    expect(open.paths).toContain('/landed');
  });

  it('judges addresses outside loopback without a browser: metadata, private, CGNAT, mapped and NAT64 forms, names resolving to them', async () => {
    const lookups: string[] = [];
    const guard = new RequestGuard({
      policy: new OutboundPolicy(),
      trustedOrigins: ['https://jp.mercari.com'],
      resolve: async (host) => {
        lookups.push(host);
        return ({ 'metadata.test': ['169.254.169.254'], 'cdn.test': ['93.184.215.14'], 'intranet.test': ['10.0.0.8'] } as Record<string, string[]>)[host] ?? [];
      },
    });
    const verdict = async (url: string) => {
      const v = await guard.check(url);
      return v.ok ? 'ok' : v.abort;
    };
    expect(await verdict('https://jp.mercari.com/search?keyword=x')).toBe('ok');
    expect(await verdict('https://cdn.test/app.js')).toBe('ok');
    expect(await verdict('data:text/plain,x')).toBe('ok');
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://10.1.2.3/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      'ws://192.168.0.1/socket',
      'http://metadata.test/',
      'http://intranet.test/',
      'file:///etc/passwd',
    ]) {
      expect(await verdict(url), url).toBe('accessdenied');
    }
    expect(await verdict('http://unknown.test/')).toBe('namenotresolved');
    expect(lookups.sort()).toEqual(['cdn.test', 'intranet.test', 'metadata.test', 'unknown.test']);
  });
});
