/**
 * The connection caps on a real node:http server on loopback, small caps: over a cap the oldest
 * idle connection makes room (its own address's first), a request in progress is never cut, a
 * newcomer with nothing idle to replace is refused, and every one of these is counted.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../metrics/metrics.js';
import { ConnectionGuard } from './connection-guard.js';

interface Setup {
  server: http.Server;
  guard: ConnectionGuard;
  metrics: Metrics;
  port: number;
  /** Requests whose handler holds them open until released. */
  release: () => void;
}

let setup: Setup | undefined;
const clients: net.Socket[] = [];

async function start(caps: { max: number; perAddress: number }): Promise<Setup> {
  let releaseAll: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') releaseAll.push(() => res.end('released'));
    else res.end('ok');
  });
  const guard = new ConnectionGuard(caps);
  const metrics = new Metrics({ defaultMetrics: false });
  guard.attach(server, metrics);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const r of releaseAll) r();
    releaseAll = [];
  };
  setup = { server, guard, metrics, port: (server.address() as AddressInfo).port, release };
  return setup;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  if (setup) {
    setup.release();
    setup.server.closeAllConnections();
    await new Promise((resolve) => setup!.server.close(resolve));
    setup = undefined;
  }
});

/** A connection from `from` (a loopback address), open once the server has counted it. */
async function connect(port: number, from = '127.0.0.1'): Promise<net.Socket> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  clients.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Resolves true once the server closed `socket`, false if it is still open after `ms`. */
function closedWithin(socket: net.Socket, ms: number): Promise<boolean> {
  if (socket.closed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once('close', done);
    socket.once('end', done);
  });
}

/** A GET on `socket` whose headers are complete; resolves with the answer's first line. */
function get(socket: net.Socket, path: string): Promise<string> {
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  return new Promise((resolve, reject) => {
    socket.once('data', (d) => resolve(d.toString().split('\r\n')[0]!));
    socket.once('close', () => reject(new Error('closed')));
  });
}

async function counters(metrics: Metrics): Promise<string> {
  return (await metrics.render()).body;
}

/** Waits until the server counts `n` connections (its 'connection' events come after the client's connect). */
async function counted(guard: ConnectionGuard, n: number): Promise<void> {
  for (let i = 0; i < 200 && guard.count !== n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(guard.count).toBe(n);
}

describe('ConnectionGuard', () => {
  it("closes the address's oldest idle connection for a newcomer over the per-address cap, not another address's", async () => {
    const { port, guard, metrics } = await start({ max: 100, perAddress: 3 });
    const other = await connect(port, '127.0.0.2');
    const mine = [await connect(port), await connect(port), await connect(port)];
    await counted(guard, 4);
    const newcomer = await connect(port);
    expect(await closedWithin(mine[0]!, 2000)).toBe(true);
    expect(await get(newcomer, '/')).toBe('HTTP/1.1 200 OK');
    expect(await closedWithin(other, 100)).toBe(false);
    expect(await closedWithin(mine[1]!, 100)).toBe(false);
    expect(await counters(metrics)).toContain('wp_http_connections_evicted_total{cap="per_address"} 1');
    expect(guard.count).toBe(4);
  });

  it('closes the oldest idle connection of any address over the total cap; kept-alive ones count as idle from their last answer', async () => {
    const { port, guard, metrics } = await start({ max: 3, perAddress: 0 });
    const a = await connect(port, '127.0.0.2');
    const b = await connect(port, '127.0.0.3');
    const c = await connect(port, '127.0.0.4');
    // `a` served a request since: idle again, but newer than `b`.
    expect(await get(a, '/')).toBe('HTTP/1.1 200 OK');
    await counted(guard, 3);
    await connect(port, '127.0.0.5');
    expect(await closedWithin(b, 2000)).toBe(true);
    expect(await closedWithin(a, 100)).toBe(false);
    expect(await closedWithin(c, 100)).toBe(false);
    expect(await counters(metrics)).toContain('wp_http_connections_evicted_total{cap="total"} 1');
  });

  it('never cuts a request in progress: with none idle, the newcomer is refused and counted', async () => {
    const { port, guard, metrics, release } = await start({ max: 100, perAddress: 2 });
    const busy = [await connect(port), await connect(port)];
    const answers = busy.map((s) => get(s, '/hold'));
    await counted(guard, 2);
    await new Promise((r) => setTimeout(r, 50)); // the requests reach their handler
    const refused = net.connect({ port, host: '127.0.0.1' });
    clients.push(refused);
    expect(await closedWithin(refused, 2000)).toBe(true);
    release();
    expect(await Promise.all(answers)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    const body = await counters(metrics);
    expect(body).toContain('wp_http_connections_refused_total{cap="per_address"} 1');
    expect(body).toContain('wp_http_connections_open 2');
  });

  it('takes a slow-header connection (headers never completed) for idle', async () => {
    const { port, guard } = await start({ max: 2, perAddress: 0 });
    const slow = await connect(port, '127.0.0.2');
    slow.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // and never the blank line
    const busy = await connect(port, '127.0.0.3');
    const held = get(busy, '/hold');
    await counted(guard, 2);
    await new Promise((r) => setTimeout(r, 50));
    const newcomer = await connect(port, '127.0.0.4');
    expect(await closedWithin(slow, 2000)).toBe(true);
    expect(await get(newcomer, '/')).toBe('HTTP/1.1 200 OK');
    setup!.release();
    expect(await held).toBe('HTTP/1.1 200 OK');
  });
});
