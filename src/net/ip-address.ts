/**
 * IP addresses and CIDR blocks as numbers, for the outbound policy. Pure: no I/O, no DNS.
 *
 * An address is its family and its value as a bigint (32 bits for IPv4, 128 for IPv6), so a
 * block test is one mask and compare. Parsing accepts only the canonical dotted-quad IPv4 form
 * and any valid IPv6 text (with `::`, an embedded dotted IPv4 tail, or a zone id, which is
 * dropped); URL hosts arrive normalised by the WHATWG parser already (`0x7f.1` → `127.0.0.1`).
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

export interface IpBlock {
  family: 4 | 6;
  /** The block's first address (host bits zero). */
  base: bigint;
  prefix: number;
}

const bitsOf = (family: 4 | 6) => (family === 4 ? 32 : 128);

function parseIPv4Value(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseIPv6Value(text: string): bigint {
  let groups: string[];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let body = text;
  let tailGroups: string[] = [];
  if (tail) {
    const v4 = Number(parseIPv4Value(tail[1]!));
    tailGroups = [(v4 >>> 16).toString(16), (v4 & 0xffff).toString(16)];
    body = text.slice(0, -tail[1]!.length);
    if (body.endsWith(':') && !body.endsWith('::')) body = body.slice(0, -1);
  }
  const [head, rest] = body.split('::') as [string, string | undefined];
  const split = (s: string) => (s === '' ? [] : s.split(':'));
  if (rest === undefined) groups = [...split(head), ...tailGroups];
  else {
    const left = split(head);
    const right = [...split(rest), ...tailGroups];
    groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** The address in `text` (IPv6 with or without brackets), or undefined when it is not an IP address. */
export function parseIp(text: string): IpAddress | undefined {
  const s = text.trim();
  if (isIPv4(s)) return { family: 4, value: parseIPv4Value(s) };
  const v6 = (s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s).replace(/%.*$/, ''); // a zone id names an interface, not an address
  if (isIPv6(v6)) return { family: 6, value: parseIPv6Value(v6) };
  return undefined;
}

/** `a.b.c.d/n`, `x::y/n`, or a single address (a block of one); undefined when malformed. */
export function parseBlock(text: string): IpBlock | undefined {
  const slash = text.indexOf('/');
  const address = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!address) return undefined;
  const bits = bitsOf(address.family);
  let prefix = bits;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > bits) return undefined;
    prefix = Number(p);
  }
  return { family: address.family, base: address.value & mask(address.family, prefix), prefix };
}

function mask(family: 4 | 6, prefix: number): bigint {
  const bits = BigInt(bitsOf(family));
  const all = (1n << bits) - 1n;
  return prefix === 0 ? 0n : (all >> (bits - BigInt(prefix))) << (bits - BigInt(prefix));
}

export function inBlock(address: IpAddress, block: IpBlock): boolean {
  return address.family === block.family && (address.value & mask(block.family, block.prefix)) === block.base;
}

/** The IPv4 address held in the low 32 bits of an IPv6 address. */
export function low32(address: IpAddress): IpAddress {
  return { family: 4, value: address.value & 0xffff_ffffn };
}

/** Dotted quad or RFC 5952-ish hex groups (not compressed), for log lines and tests. */
export function formatIp(address: IpAddress): string {
  if (address.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((address.value >> s) & 0xffn)).join('.');
  return Array.from({ length: 8 }, (_, i) => ((address.value >> BigInt(112 - i * 16)) & 0xffffn).toString(16)).join(':');
}
