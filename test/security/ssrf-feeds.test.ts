/**
 * Issue 16, finding 1 (SSRF) as an attacker drives it, over the REST API of a platform whose
 * OUTBOUND_ALLOW opens only 127.0.0.2 and 127.0.0.3 (two stand-ins for public servers; all of
 * 127.0.0.0/8 is loopback on Linux, so no traffic leaves the machine). 127.0.0.1 plays the
 * loopback-only service an attacker is after.
 *
 * Fails on the code before the outbound policy: there the loopback feeds were fetched and their
 * content stored as articles, a redirect to loopback was followed, and lastError told a closed
 * port (ECONNREFUSED) from a silent one (timeout) and from a non-HTTP one (a parser error).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedServer } from '../fixtures/feeds/feed-server.js';
import { startFeedPlatform, waitForTask } from '../feeds/support.js';
import type { TestPlatform } from '../support/platform.js';
import { NOT_ALLOWED_HINT } from '../../src/net/outbound-policy.js';

const NOT_ALLOWED = (host: string) => `destination_not_allowed: ${host} is not an allowed destination${NOT_ALLOWED_HINT}`;

describe('SSRF: feeds reach only what the outbound policy allows', () => {
  let t: TestPlatform;
  let server: FeedServer;
  const tcpServers: net.Server[] = [];
  const tcpSockets = new Set<net.Socket>();

  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ t, server, stop } = await startFeedPlatform({
      hosts: ['127.0.0.1', '127.0.0.2', '127.0.0.3'],
      env: { OUTBOUND_ALLOW: '127.0.0.2,127.0.0.3', FEED_FETCH_TIMEOUT_MS: '1500', FEED_ATTEMPTS: '1' },
    }));
  });
  afterAll(async () => {
    await stop?.();
    for (const s of tcpSockets) s.destroy();
    for (const s of tcpServers) await new Promise((resolve) => s.close(resolve));
  });

  async function subscribe(url: string) {
    const res = await t.api.post('/api/feeds', { url });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const task = await waitForTask(t.api, res.body.taskId);
    const feed = (await t.api.get(`/api/feeds/${res.body.id}`)).body;
    const articles = (await t.api.get(`/api/feeds/${res.body.id}/articles`)).body.articles as unknown[];
    return { task, feed, articles };
  }

  const secretRequests = () => server.requests.filter((r) => r.path.startsWith('/rss/secret'));

  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/rss/secret-a.xml`, '127.0.0.1'],
    ['IPv4-mapped IPv6 loopback', (port: number) => `http://[::ffff:7f00:1]:${port}/rss/secret-b.xml`, '[::ffff:7f00:1]'],
    ['IPv6 loopback', (port: number) => `http://[::1]:${port}/rss/secret-c.xml`, '[::1]'],
    ['a DNS name resolving to 127.0.0.1 (localhost)', (port: number) => `http://localhost:${port}/rss/secret-d.xml`, 'localhost'],
    ['a decimal IPv4 literal', (port: number) => `http://2130706433:${port}/rss/secret-e.xml`, '127.0.0.1'],
    ['0.0.0.0 (reaches local services on Linux)', (port: number) => `http://0.0.0.0:${port}/rss/secret-f.xml`, '0.0.0.0'],
  ])('refuses a feed on %s: failed for good, nothing requested, nothing stored', async (_name, url, host) => {
    const { task, feed, articles } = await subscribe(url(server.port));
    expect(task.state).toBe('failed');
    expect(task.attemptsMade).toBe(1);
    expect(task.failedReason).toBe(NOT_ALLOWED(host));
    expect(feed).toMatchObject({ status: 'error', errorCount: 1, lastError: NOT_ALLOWED(host), articleCount: 0 });
    expect(articles).toEqual([]);
    expect(secretRequests()).toEqual([]);
  });

  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/rss/secret-r1.xml`, '127.0.0.1'],
    ['localhost', (port: number) => `http://localhost:${port}/rss/secret-r2.xml`, 'localhost'],
    ['[::ffff:127.0.0.1]', (port: number) => `http://[::ffff:127.0.0.1]:${port}/rss/secret-r3.xml`, '[::ffff:7f00:1]'],
  ])('refuses a redirect chain (allowed host → allowed host → %s) at its last hop', async (_name, target, host) => {
    const last = target(server.port);
    const middle = server.url(`/to?url=${encodeURIComponent(last)}`, '127.0.0.3');
    const first = server.url(`/to?url=${encodeURIComponent(middle)}`, '127.0.0.2');
    const before = server.requests.length;
    const { task, feed, articles } = await subscribe(first);
    expect(task.state).toBe('failed');
    expect(task.failedReason).toBe(NOT_ALLOWED(host));
    expect(feed).toMatchObject({ status: 'error', lastError: NOT_ALLOWED(host), articleCount: 0 });
    expect(articles).toEqual([]);
    // The two allowed hops were made; the loopback one never was.
    expect(server.requests.slice(before).map((r) => `${r.host}${r.path}`)).toEqual(['127.0.0.2/to', '127.0.0.3/to']);
    expect(secretRequests()).toEqual([]);
  });

  it('still fetches allowed destinations, through a redirect from one to the other', async () => {
    const url = server.url(`/to?url=${encodeURIComponent(server.url('/rss/public.xml?items=3', '127.0.0.3'))}`, '127.0.0.2');
    const { task, feed, articles } = await subscribe(url);
    expect(task.state).toBe('completed');
    expect(task.result).toMatchObject({ outcome: 'refreshed', items: 3 });
    expect(feed).toMatchObject({ status: 'ok', lastError: null, articleCount: 3 });
    expect(articles).toHaveLength(3);
  });

  it('reads every connection failure the same (no port scanning through lastError): closed, reset, silent, not HTTP, closed at once', async () => {
    const listen = async (onConnection: (s: net.Socket) => void) => {
      const s = net.createServer((socket) => {
        tcpSockets.add(socket);
        onConnection(socket);
      });
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.2', resolve));
      tcpServers.push(s);
      return (s.address() as net.AddressInfo).port;
    };
    const closedPort = await (async () => {
      const s = net.createServer();
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.2', resolve));
      const port = (s.address() as net.AddressInfo).port;
      await new Promise((resolve) => s.close(resolve));
      return port;
    })();
    const ports = {
      closed: closedPort,
      reset: await listen((s) => s.resetAndDestroy()),
      silent: await listen((s) => s.resume()), // reads the request, never answers
      // What an open Redis port answers to an HTTP request.
      notHttp: await listen((s) => s.end("-ERR unknown command 'GET', with args beginning with: '/'\r\n")),
      closedAtOnce: await listen((s) => s.end()),
    };
    const results = await Promise.all(Object.values(ports).map((port) => subscribe(`http://127.0.0.2:${port}/feed.xml`)));
    const seen = Object.fromEntries(
      Object.keys(ports).map((name, i) => [name, { reason: results[i]!.task.failedReason, lastError: results[i]!.feed.lastError }]),
    );
    const same = { reason: 'connection_failed: could not connect, or no answer', lastError: 'connection_failed: could not connect, or no answer' };
    expect(seen).toEqual({ closed: same, reset: same, silent: same, notHttp: same, closedAtOnce: same });
  });
});
