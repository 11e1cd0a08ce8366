import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging/logger.js';
import type { HttpApp } from './app.js';

export interface HttpServer {
  url: string;
  server: http.Server;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. Idempotent. */
  close(): Promise<void>;
}

export async function listen(app: HttpApp, host: string, port: number, graceMs: number, logger?: Logger): Promise<HttpServer> {
  const server = http.createServer(app.listener);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  const inFlight = new Map<http.ServerResponse, { method: string; path: string; since: number }>();
  // Once closing, a request that still comes on a kept-alive connection is answered with
  // `Connection: close`, so that a client sending request after request on one connection does
  // not hold the stop up until the grace period runs out.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    inFlight.set(res, { method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, since: Date.now() });
    res.once('close', () => inFlight.delete(res));
  });
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        // Responses still to be written close their connection; a connection that becomes idle
        // later (its request was in flight when the stop began) is closed on the next sweep.
        for (const res of inFlight.keys()) if (!res.headersSent) res.setHeader('connection', 'close');
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const timer = setTimeout(() => {
          const now = Date.now();
          logger?.warn(
            { graceMs, inFlight: [...inFlight.values()].map((r) => `${r.method} ${r.path} (${now - r.since} ms)`) },
            'requests outlived the shutdown grace period; their connections are cut',
          );
          server.closeAllConnections();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}
