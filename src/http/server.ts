import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpApp } from './app.js';

export interface HttpServer {
  url: string;
  server: http.Server;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. Idempotent. */
  close(): Promise<void>;
}

export async function listen(app: HttpApp, host: string, port: number, graceMs: number): Promise<HttpServer> {
  const server = http.createServer(app.serverOptions, app.listener);
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
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}
