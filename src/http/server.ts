/**
 * The API's node:http server: the app's listener behind the connection limits (connection-guard.ts:
 * a cap in all and per client address, under the open-file limit), the header, receive and
 * keep-alive timeouts, and an ordered stop.
 *
 * Why the cap sits under the open-file limit: a process out of file descriptors cannot accept a
 * connection, open a Redis or PostgreSQL connection, or read a file, so every request failed
 * (/healthz included) until timeouts closed enough connections. Below the limit by
 * HTTP_FD_RESERVE, the cap is met first and then makes room for newcomers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OrderedList } from '../lib/ordered-list.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { HttpApp } from './app.js';
import { ConnectionGuard } from './connection-guard.js';
import { openFileLimit } from './open-file-limit.js';

export interface HttpServer {
  url: string;
  server: http.Server;
  /** The connection cap in force (HTTP_MAX_CONNECTIONS, or lower under the open-file limit). */
  maxConnections: number;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. Idempotent. */
  close(): Promise<void>;
}

/** The connection limits and timeouts (HTTP_* settings). */
export interface ServerLimits {
  maxConnections: number;
  /** 0 = none. */
  maxConnectionsPerAddress: number;
  /** Open files kept out of the connection cap. */
  fdReserve: number;
  headersTimeoutMs: number;
  /** The whole request, body included (node's requestTimeout). */
  receiveTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface ListenOptions {
  host: string;
  port: number;
  graceMs: number;
  limits: ServerLimits;
  logger?: Logger;
  metrics?: Metrics;
}

/** Least time between two log lines of failed accepts (EMFILE and the like come in bursts). */
const ACCEPT_ERROR_LOG_EVERY_MS = 10_000;

/**
 * The connection cap under the open-file limit (node raised its soft limit to the hard one at
 * start, see open-file-limit.ts), keeping `fdReserve` files for everything else.
 */
function connectionCap(limits: ServerLimits, logger?: Logger): number {
  const limit = openFileLimit();
  const room = limit ? limit.soft - limits.fdReserve : Infinity;
  if (limits.maxConnections <= room) return limits.maxConnections;
  const cap = Math.max(1, room);
  logger?.warn(
    { maxConnections: limits.maxConnections, cap, openFileLimit: limit?.soft, fdReserve: limits.fdReserve },
    'HTTP_MAX_CONNECTIONS is above the open-file limit less HTTP_FD_RESERVE; connections are capped lower (raise the hard limit: ulimit -Hn, LimitNOFILE=, --ulimit nofile=)',
  );
  return cap;
}

export async function listen(app: HttpApp, options: ListenOptions): Promise<HttpServer> {
  const { host, port, graceMs, limits, logger } = options;
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.receiveTimeoutMs,
      // How often node looks for connections past those timeouts (its default, 30 s, let a
      // slow-header connection live up to 90 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    app.listener,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  const maxConnections = connectionCap(limits, logger);
  new ConnectionGuard({ max: maxConnections, perAddress: limits.maxConnectionsPerAddress }).attach(server, options.metrics);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // An accept that fails (out of file descriptors despite the cap: another part of the process
  // took them) must not end the process; node retries on the next connection.
  let acceptErrorLoggedAt = 0;
  server.on('error', (err) => {
    if (Date.now() - acceptErrorLoggedAt < ACCEPT_ERROR_LOG_EVERY_MS) return;
    acceptErrorLoggedAt = Date.now();
    logger?.error({ err: err.message }, 'the HTTP server could not accept a connection');
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  // Not a Map keyed by response: every request enters and leaves it (ordered-list.ts).
  const inFlight = new OrderedList<{ res: http.ServerResponse; since: number }>();
  // Once closing, a request that still comes on a kept-alive connection is answered with
  // `Connection: close`, so that a client sending request after request on one connection does
  // not hold the stop up until the grace period runs out.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    const entry = inFlight.add({ res, since: Date.now() });
    res.once('close', () => inFlight.remove(entry));
  });
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    maxConnections,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        // Responses still to be written close their connection; a connection that becomes idle
        // later (its request was in flight when the stop began) is closed on the next sweep.
        for (const { res } of inFlight.values()) if (!res.headersSent) res.setHeader('connection', 'close');
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const timer = setTimeout(() => {
          const now = Date.now();
          logger?.warn(
            {
              graceMs,
              inFlight: [...inFlight.values()].map(({ res, since }) => `${res.req.method ?? ''} ${(res.req.url ?? '').split('?')[0]} (${now - since} ms)`),
            },
            'requests outlived the shutdown grace period; their connections are cut',
          );
          server.closeAllConnections();
        }, graceMs);
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweep);
          app.close();
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}
