/**
 * The client address a login attempt is counted against. IPv4-mapped IPv6 addresses count as
 * their IPv4 address, and an IPv6 address as its /64: one host usually holds a whole /64, so
 * counting single IPv6 addresses would give an attacker 2^64 fresh counters.
 */
import { formatIp, low32, parseIp } from '../net/ip-address.js';

const MAPPED_PREFIX = 0xffffn; // ::ffff:a.b.c.d

export function loginAddressKey(ip: string | undefined): string {
  const address = ip ? parseIp(ip) : undefined;
  if (!address) return 'unknown';
  if (address.family === 4) return formatIp(address);
  if (address.value >> 32n === MAPPED_PREFIX) return formatIp(low32(address));
  return `${formatIp(address).split(':').slice(0, 4).join(':')}::/64`;
}
