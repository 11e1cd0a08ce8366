/**
 * The client's address of a request: the peer's, or behind a reverse proxy (HTTP_TRUST_PROXY) the
 * first address of X-Forwarded-For, the one the first proxy saw (as express's `trust proxy: true`).
 */
import type { IncomingMessage } from 'node:http';

export function clientAddress(trustProxy: boolean): (req: IncomingMessage) => string | undefined {
  if (!trustProxy) return (req) => req.socket.remoteAddress;
  return (req) => {
    const forwarded = req.headers['x-forwarded-for'];
    if (typeof forwarded === 'string') {
      for (const entry of forwarded.split(',')) {
        const address = entry.trim();
        if (address) return address;
      }
    }
    return req.socket.remoteAddress;
  };
}
