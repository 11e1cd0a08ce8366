/**
 * The API server's limits on loopback: the connection cap kept under the open-file limit less
 * the reserve, the header timeout closing a slow-header connection (408) and the keep-alive
 * timeout an idle one, each well before node's defaults (60 s and more) would; and its stop, which
 * answers the requests in flight with `Connection: close` and cuts (and names) those that outlive
 * the grace period.
 */
import net from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { HttpApp } from './app.js';
import { openFileLimit, parseOpenFileLimit } from './open-file-limit.js';
import { listen, type ServerLimits } from './server.js';

const app: HttpApp = { listener: (_req, res) => res.end('ok'), close: () => undefined };
const limits: ServerLimits = {
  maxConnections: 100,
  maxConnectionsPerAddress: 0,
  fdReserve: 1024,
  headersTimeoutMs: 1000,
  receiveTimeoutMs: 2000,
  keepAliveTimeoutMs: 1000,
};

/** Resolves with what the server sent before it closed the connection (rejects after `ms`). */
function untilClosed(socket: net.Socket, ms: number): Promise<string> {
  let received = '';
  socket.on('data', (d) => (received += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

describe('the API server', () => {
  it('reads the open-file limit', () => {
    const text =
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n';
    expect(parseOpenFileLimit(text)).toEqual({ soft: 1024, hard: 524288 });
    expect(parseOpenFileLimit('Max open files            unlimited            unlimited            files')).toEqual({ soft: Infinity, hard: Infinity });
    expect(parseOpenFileLimit('nothing here')).toBeUndefined();
  });

  it('keeps the connection cap under the open-file limit less the reserve', async () => {
    const limit = openFileLimit();
    const server = await listen(app, { host: '127.0.0.1', port: 0, graceMs: 100, limits: { ...limits, maxConnections: 100_000_000 } });
    try {
      expect(limit).toBeDefined(); // Linux
      expect(server.maxConnections).toBe(limit!.soft - limits.fdReserve);
    } finally {
      await server.close();
    }
  });

  it('closes a connection whose headers do not come in time (408), and an idle kept-alive one', async () => {
    const server = await listen(app, { host: '127.0.0.1', port: 0, graceMs: 100, limits });
    const port = Number(new URL(server.url).port);
    try {
      const slow = net.connect({ port, host: '127.0.0.1' });
      slow.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // the blank line never comes
      expect(await untilClosed(slow, 15_000)).toMatch(/^HTTP\/1\.1 408 /);

      const idle = net.connect({ port, host: '127.0.0.1' });
      idle.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      expect(await untilClosed(idle, 15_000)).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*ok$/);
    } finally {
      await server.close();
    }
  });

  it('on stop answers the requests in flight with Connection: close, and cuts and names those outliving the grace period', async () => {
    const held: (() => void)[] = [];
    const holding: HttpApp = {
      listener: (req, res) => {
        if (req.url?.startsWith('/quick')) res.end('quick');
        else held.push(() => res.end('late'));
      },
      close: () => undefined,
    };
    const lines: { msg: string; inFlight?: string[] }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const server = await listen(holding, { host: '127.0.0.1', port: 0, graceMs: 1500, limits: { ...limits, keepAliveTimeoutMs: 60_000 }, logger });
    const port = Number(new URL(server.url).port);
    const open = (path: string) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      return socket;
    };
    // Done before the stop, on a kept-alive connection: neither in flight nor named.
    const quick = open('/quick?x=1');
    const quickClosed = untilClosed(quick, 15_000);
    await new Promise<void>((resolve) => quick.once('data', () => resolve()));
    const answered = open('/answered');
    const cut = open('/outlives?token=secret');
    const answeredClosed = untilClosed(answered, 15_000);
    const cutClosed = untilClosed(cut, 15_000);
    await expect.poll(() => held.length).toBe(2);
    const stopped = server.close();
    held[0]!(); // answered within the grace period
    expect(await answeredClosed).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*connection: close[\s\S]*late$/i);
    // The other one outlives it: its connection is cut without an answer.
    expect(await cutClosed).toBe('');
    await stopped;
    expect(await quickClosed).toMatch(/quick$/);
    const warning = lines.find((l) => l.msg === 'requests outlived the shutdown grace period; their connections are cut');
    expect(warning?.inFlight).toEqual([expect.stringMatching(/^GET \/outlives \(\d+ ms\)$/)]);
  });
});
