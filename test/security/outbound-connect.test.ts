/**
 * The outbound policy at the connection (src/net/outbound-dispatcher.ts), through undici's fetch
 * and through fetchFeed, with a stub resolver and a connector that proves what was connected to.
 *
 * No packet leaves loopback: the recording connector opens real sockets only to 127.0.0.0/8 and
 * fails every other attempt without touching the network (and records it, so an attempt the
 * policy should have stopped fails the test). Refused addresses are reached only through the stub
 * resolver or as IP literals, both checked before any connector call.
 *
 * On the code before the policy (global fetch, no dispatcher) none of this existed: every URL here
 * was connected to as given (finding 1 of issue 16; see ssrf-feeds.test.ts for the API-level test).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch, buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFeed } from '../../src/feeds/fetch-feed.js';
import { FeedRefreshError } from '../../src/feeds/refresh-failure.js';
import { createOutboundDispatcher, type Resolver } from '../../src/net/outbound-dispatcher.js';
import { DestinationNotAllowedError, NOT_ALLOWED_HINT, OutboundPolicy } from '../../src/net/outbound-policy.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';

interface Attempt {
  hostname: string;
  servername?: string;
}

/** A dispatcher with the policy of `allow`, resolving names with `names` only, recording every connector call. */
function guarded(allow: string[], names: Record<string, string[] | (() => string[])> = {}) {
  const attempts: Attempt[] = [];
  const lookups: string[] = [];
  const resolve: Resolver = async (hostname) => {
    lookups.push(hostname);
    const entry = names[hostname];
    if (!entry) throw Object.assign(new Error(`stub resolver: no ${hostname}`), { code: 'ENOTFOUND' });
    return typeof entry === 'function' ? entry() : entry;
  };
  const real = buildConnector({ timeout: 2000 });
  const connector: buildConnector.connector = (opts, callback) => {
    attempts.push({ hostname: opts.hostname, servername: opts.servername });
    if (!/^127\.\d+\.\d+\.\d+$/.test(opts.hostname)) return callback(new Error('stub connector: tests never connect outside loopback'), null);
    real(opts, callback);
  };
  const dispatcher = createOutboundDispatcher(OutboundPolicy.fromEntries(allow), { resolve, connector });
  return { dispatcher, attempts, lookups };
}

async function failure(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('outbound policy at the connection', () => {
  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '10.0.0.5',
    '172.16.3.4',
    '192.168.1.1',
    '100.64.0.1',
    '100.100.100.200',
    '224.0.0.251',
    '239.255.255.250',
    '0.0.0.0',
    '255.255.255.255',
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '198.18.0.1',
    '240.0.0.1',
    '127.0.0.1',
    '::1',
    '::',
    '::ffff:169.254.169.254',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::7f00:1',
    '2002:a9fe:a9fe::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '2001:db8::1',
  ])('a name resolving to %s is refused before any connection', async (address) => {
    const { dispatcher, attempts, lookups } = guarded([], { 'target.test': [address] });
    const err = await failure(fetch('http://target.test/latest/meta-data/', { dispatcher }));
    expect(err.cause).toBeInstanceOf(DestinationNotAllowedError);
    expect(err.cause.message).toBe(`target.test is not an allowed destination${NOT_ALLOWED_HINT}`);
    expect(lookups).toEqual(['target.test']);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::a9fe:a9fe]/',
    'http://10.0.0.1:6379/',
    'http://100.100.100.200/',
    'http://0/',
    'http://[::]/',
    'http://[::ffff:7f00:1]:6379/',
    'http://0x7f.1:6379/',
    'http://2130706433:6379/',
    'https://192.168.0.1/',
    'http://224.0.0.1/',
    'http://198.51.100.7/',
  ])('the IP literal of %s is refused without a lookup or a connection', async (url) => {
    const { dispatcher, attempts, lookups } = guarded([]);
    const err = await failure(fetch(url, { dispatcher }));
    expect(err.cause).toBeInstanceOf(DestinationNotAllowedError);
    expect(lookups).toEqual([]);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('a name with one refused address among public ones is refused', async () => {
    const { dispatcher, attempts } = guarded([], { 'mixed.test': ['93.184.215.14', '10.0.0.1'] });
    expect((await failure(fetch('http://mixed.test/', { dispatcher }))).cause).toBeInstanceOf(DestinationNotAllowedError);
    expect(attempts).toEqual([]);
    await dispatcher.close();
  });

  it('a public name is connected to at the address that was checked, with the name as TLS server name', async () => {
    const { dispatcher, attempts } = guarded([], { 'feeds.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    const err = await failure(fetch('https://feeds.example/rss.xml', { dispatcher }));
    expect(err.cause).not.toBeInstanceOf(DestinationNotAllowedError);
    // Both checked addresses tried in order (the stub connector refuses to go outside loopback).
    expect(attempts).toEqual([
      { hostname: '93.184.215.14', servername: 'feeds.example' },
      { hostname: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', servername: 'feeds.example' },
    ]);
    await dispatcher.close();
  });

  it('a host name OUTBOUND_ALLOW names is connected to by name, unchecked', async () => {
    const { dispatcher, attempts, lookups } = guarded(['feeds.intranet']);
    await failure(fetch('http://feeds.intranet/rss.xml', { dispatcher }));
    expect(lookups).toEqual([]);
    expect(attempts.map((a) => a.hostname)).toEqual(['feeds.intranet']);
    await dispatcher.close();
  });

  describe('against loopback servers', () => {
    const servers: http.Server[] = [];
    let port = 0;
    const seenBy: string[] = [];

    beforeAll(async () => {
      // One port on 127.0.0.1 and 127.0.0.2; answers "Connection: close", so that every request
      // needs a new connection (and a new lookup).
      for (const host of ['127.0.0.1', '127.0.0.2']) {
        const server = http.createServer((req, res) => {
          seenBy.push(req.socket.localAddress ?? '');
          res.writeHead(200, { connection: 'close', 'content-type': 'text/plain' });
          res.end('secret');
        });
        await new Promise<void>((resolve) => server.listen(port, host, resolve));
        port = (server.address() as AddressInfo).port;
        servers.push(server);
      }
    });
    afterAll(async () => {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('a name that resolves to an allowed address, then re-resolves to 127.0.0.1 (DNS rebinding), is refused at the next connection', async () => {
      let calls = 0;
      const { dispatcher, attempts } = guarded(['127.0.0.2'], { 'rebind.test': () => (++calls === 1 ? ['127.0.0.2'] : ['127.0.0.1']) });
      const first = await fetch(`http://rebind.test:${port}/`, { dispatcher });
      expect(first.status).toBe(200);
      expect(await first.text()).toBe('secret');
      const err = await failure(fetch(`http://rebind.test:${port}/`, { dispatcher }));
      expect(err.cause).toBeInstanceOf(DestinationNotAllowedError);
      expect(err.cause.detail).toBe('rebind.test → 127.0.0.1: loopback');
      expect(attempts.map((a) => a.hostname)).toEqual(['127.0.0.2']);
      expect(seenBy).toEqual(['127.0.0.2']);
      await dispatcher.close();
    });

    it('the real resolver: localhost (a name for 127.0.0.1 and ::1) is refused', async () => {
      const dispatcher = createOutboundDispatcher(new OutboundPolicy());
      const before = seenBy.length;
      const err = await failure(fetch(`http://localhost:${port}/`, { dispatcher }));
      expect(err.cause).toBeInstanceOf(DestinationNotAllowedError);
      expect(seenBy.length).toBe(before);
      await dispatcher.close();
    });
  });

  describe('fetchFeed', () => {
    let feeds: FeedServer;
    beforeAll(async () => {
      feeds = await startFeedServer({ hosts: ['127.0.0.1', '127.0.0.2'] });
    });
    afterAll(async () => {
      await feeds?.stop();
    });
    const options = { userAgent: 'test', timeoutMs: 5000, maxBytes: 1 << 20, maxRedirects: 5, maxRetryAfterMs: 1000 };

    it.each([
      ['a name for the metadata address', 'http://metadata.test/latest/meta-data/iam/security-credentials/'],
      ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
      ['an IPv4-mapped loopback address', 'http://[::ffff:7f00:1]:PORT/rss/secret.xml'],
      ['a name for loopback', 'http://loop.test:PORT/rss/secret.xml'],
    ])('checks every redirect hop: a redirect to %s is refused, destination_not_allowed', async (_name, target) => {
      const { dispatcher, attempts } = guarded(['127.0.0.2'], { 'metadata.test': ['169.254.169.254'], 'loop.test': ['127.0.0.1'] });
      const hops: string[] = [];
      const url = feeds.url(`/to?url=${encodeURIComponent(target.replace('PORT', String(feeds.port)))}`, '127.0.0.2');
      const err = await failure(fetchFeed(url, { ...options, dispatcher, beforeHostChange: async (from, to) => void hops.push(`${from} → ${to}`) }));
      expect(err).toBeInstanceOf(FeedRefreshError);
      expect(err.failure).toBe('destination_not_allowed');
      expect(err.permanent).toBe(true);
      expect(attempts.map((a) => a.hostname)).toEqual(['127.0.0.2']);
      expect(feeds.requests.filter((r) => r.path === '/rss/secret.xml')).toEqual([]);
      expect(hops).toHaveLength(1);
      await dispatcher.close();
    });

    it('fetches what the policy allows, across a redirect to another allowed host', async () => {
      const { dispatcher } = guarded(['127.0.0.1', '127.0.0.2']);
      const hops: string[] = [];
      const url = feeds.url(`/to?url=${encodeURIComponent(feeds.url('/rss/allowed.xml', '127.0.0.1'))}`, '127.0.0.2');
      const res = await fetchFeed(url, { ...options, dispatcher, beforeHostChange: async (from, to) => void hops.push(`${from} → ${to}`) });
      expect(res).toMatchObject({ kind: 'fetched', status: 200, redirects: 1, finalUrl: feeds.url('/rss/allowed.xml', '127.0.0.1') });
      expect(hops).toEqual(['127.0.0.2 → 127.0.0.1']);
      await dispatcher.close();
    });
  });
});
