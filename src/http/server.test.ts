/**
 * The API server's limits on loopback: the connection cap kept under the open-file limit less
 * the reserve, the header timeout closing a slow-header connection (408) and the keep-alive
 * timeout an idle one, each well before node's defaults (60 s and more) would.
 */
import net from 'node:net';
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
});
