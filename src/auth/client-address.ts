/**
 * The client address a login attempt is counted against. IPv4-mapped IPv6 addresses count as
 * their IPv4 address, and an IPv6 address as its /64: one host usually holds a whole /64, so
 * counting single IPv6 addresses would give an attacker 2^64 fresh counters.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function loginAddressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return 'unknown';
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros ('::' expanded, a zone dropped). */
function expandIPv6(ip: string): string[] {
  const address = ip.split('%')[0]!.toLowerCase();
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const parts = (s: string | undefined) => (s ? s.split(':') : []);
  const left = parts(head);
  const right = parts(tail);
  // An embedded IPv4 tail (::1.2.3.4) takes two groups.
  const last = right.length ? right : left;
  if (last.length && last[last.length - 1]!.includes('.')) {
    const [a, b, c, d] = last.pop()!.split('.').map(Number);
    last.push(((a! << 8) | b!).toString(16), ((c! << 8) | d!).toString(16));
  }
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16).toString(16));
}
