/**
 * The client's address of a request, which the login limits count by (src/auth/login-rate-limit.ts).
 *
 * Without proxies it is the peer's. Behind reverse proxies it comes from X-Forwarded-For, where
 * each proxy appends the address it received the request from: only the entries on the right,
 * written by proxies we trust, are facts; everything to the left of them is whatever the client
 * sent. So the address is read from the right, never the left (the leftmost entry is the
 * client's choice, and counting by it let one client change its address on every login):
 *
 * - `HTTP_TRUSTED_PROXIES` (addresses and CIDR blocks): X-Forwarded-For is read only when the
 *   peer is one of them; walking it from the right, trusted entries are skipped and the first
 *   untrusted one is the client. All trusted: the leftmost. An entry that is not an IP address
 *   ends the walk at the hop that wrote it (the trusted address to its right).
 * - `HTTP_TRUST_PROXY=<n>` (a hop count) without a list: the peer and the n-1 entries to the
 *   right of X-Forwarded-For are proxies; the next entry to the left is the client (fewer entries:
 *   the leftmost). `true` is one hop (one proxy in front: the right-most entry, the address that
 *   proxy saw), as `false` is none.
 *
 * A list beside a hop count over 1 is refused at start (src/config/index.ts): say which.
 */
import type { IncomingMessage } from 'node:http';
import { inBlock, parseBlock, parseIp, type IpAddress, type IpBlock } from '../net/ip-address.js';

export type ProxyTrust = { kind: 'none' } | { kind: 'hops'; hops: number } | { kind: 'list'; blocks: IpBlock[] };

/**
 * HTTP_TRUST_PROXY (a hop count: false = 0, true = 1) and HTTP_TRUSTED_PROXIES (checked blocks,
 * src/config/platform.ts) as one rule; the list wins (loadConfig refuses it beside a count over 1).
 */
export function proxyTrust(hops: number, trustedProxies: readonly string[]): ProxyTrust {
  if (trustedProxies.length) return { kind: 'list', blocks: trustedProxies.map((entry) => parseBlock(entry)!) };
  return hops === 0 ? { kind: 'none' } : { kind: 'hops', hops };
}

/** The X-Forwarded-For entries, all headers of that name joined, left to right. */
function forwardedEntries(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** An address as it may be compared with a block: an IPv4-mapped IPv6 address as its IPv4 one. */
function comparable(text: string): IpAddress | undefined {
  const address = parseIp(text);
  if (address?.family === 6 && address.value >> 32n === 0xffffn) return { family: 4, value: address.value & 0xffff_ffffn };
  return address;
}

const trusted = (blocks: IpBlock[], address: IpAddress | undefined) => address !== undefined && blocks.some((b) => inBlock(address, b));

/** The client address of a request under `trust`: what the login limits count by and handlers see as `ip`. */
export function clientAddress(trust: ProxyTrust): (req: IncomingMessage) => string | undefined {
  if (trust.kind === 'none') return (req) => req.socket.remoteAddress;
  if (trust.kind === 'hops') {
    return (req) => {
      const hops = [req.socket.remoteAddress, ...forwardedEntries(req.headers['x-forwarded-for']).reverse()];
      return hops[Math.min(trust.hops, hops.length - 1)];
    };
  }
  const { blocks } = trust;
  return (req) => {
    const peer = req.socket.remoteAddress;
    if (!peer || !trusted(blocks, comparable(peer))) return peer;
    let client = peer;
    for (const entry of forwardedEntries(req.headers['x-forwarded-for']).reverse()) {
      const address = comparable(entry);
      if (!address) return client; // not an address: the hop that wrote it is as far as facts go
      client = entry;
      if (!trusted(blocks, address)) return client;
    }
    return client;
  };
}
