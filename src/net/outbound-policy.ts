/**
 * Where the platform may connect when it makes a request for a user (a feed, each of its
 * redirects, a page the crawler's browser is led to). Pure: it judges addresses and names; the
 * connection itself is checked in outbound-dispatcher.ts (feeds) and src/crawl/request-guard.ts (crawler).
 *
 * Default deny of everything that is not a public unicast address:
 *
 * | reason        | IPv4                                               | IPv6                               |
 * |---------------|----------------------------------------------------|------------------------------------|
 * | unspecified   | 0.0.0.0/8                                          | ::/128                             |
 * | loopback      | 127.0.0.0/8                                        | ::1/128                            |
 * | private       | 10/8, 172.16/12, 192.168/16                        | fc00::/7 (ULA), fec0::/10          |
 * | link_local    | 169.254/16 (169.254.169.254, cloud metadata)       | fe80::/10                          |
 * | cgnat         | 100.64/10                                          |                                    |
 * | multicast     | 224/4                                              | ff00::/8                           |
 * | broadcast     | 255.255.255.255                                    |                                    |
 * | documentation | 192.0.2/24, 198.51.100/24, 203.0.113/24            | 2001:db8::/32, 3fff::/20           |
 * | benchmarking  | 198.18/15                                          | 2001:2::/48                        |
 * | reserved      | 240/4, 192.0.0/24, 192.88.99/24                    | 2001::/23 (Teredo...), 100::/64,   |
 * |               |                                                    | anything outside 2000::/3          |
 *
 * IPv6 forms that carry an IPv4 address are judged by that address: IPv4-mapped ::ffff:0:0/96,
 * IPv4-compatible ::/96, NAT64 64:ff9b::/96 and 6to4 2002::/16 (so `::ffff:7f00:1` is loopback,
 * `64:ff9b::a9fe:a9fe` is link-local, `64:ff9b::808:808` is public).
 *
 * OUTBOUND_ALLOW opens destinations on purpose: CIDR blocks or single addresses (an IPv4 entry
 * also covers the IPv4-mapped form of its addresses, which is the same socket destination), and
 * host names, exact (`feeds.intranet`) or every name under a domain (`*.corp.example`). A host
 * name entry allows that name whatever it resolves to; an address entry allows the address
 * whatever name led to it.
 */
import { inBlock, low32, parseBlock, parseIp, type IpAddress, type IpBlock } from './ip-address.js';

export type RefusalReason =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'not_an_address';

/** How an IPv6 address carries the IPv4 address it was judged by. */
export type Embedding = 'ipv4_mapped' | 'ipv4_compatible' | 'nat64' | '6to4';

export type Verdict = { allowed: true; by: 'public' | 'allow_list' } | { allowed: false; reason: RefusalReason; via?: Embedding };

const block = (text: string): IpBlock => {
  const b = parseBlock(text);
  if (!b) throw new Error(`bad built-in block ${text}`);
  return b;
};

/** First match wins; an IPv4 address matching none is public. */
const IPV4_DENY: [IpBlock, RefusalReason][] = [
  [block('0.0.0.0/8'), 'unspecified'],
  [block('10.0.0.0/8'), 'private'],
  [block('100.64.0.0/10'), 'cgnat'],
  [block('127.0.0.0/8'), 'loopback'],
  [block('169.254.0.0/16'), 'link_local'],
  [block('172.16.0.0/12'), 'private'],
  [block('192.0.0.0/24'), 'reserved'],
  [block('192.0.2.0/24'), 'documentation'],
  [block('192.88.99.0/24'), 'reserved'],
  [block('192.168.0.0/16'), 'private'],
  [block('198.18.0.0/15'), 'benchmarking'],
  [block('198.51.100.0/24'), 'documentation'],
  [block('203.0.113.0/24'), 'documentation'],
  [block('224.0.0.0/4'), 'multicast'],
  [block('255.255.255.255/32'), 'broadcast'],
  [block('240.0.0.0/4'), 'reserved'],
];

/** IPv6 blocks holding an IPv4 address, judged by it: [block, how, shift of the IPv4 address]. */
const IPV6_EMBEDDED: [IpBlock, Embedding, bigint][] = [
  [block('::ffff:0:0/96'), 'ipv4_mapped', 0n],
  [block('64:ff9b::/96'), 'nat64', 0n],
  [block('2002::/16'), '6to4', 80n],
];
/** ::/96 less :: and ::1 (judged first). */
const IPV4_COMPATIBLE = block('::/96');

const IPV6_UNSPECIFIED = block('::/128');
const IPV6_LOOPBACK = block('::1/128');

const IPV6_DENY: [IpBlock, RefusalReason][] = [
  [block('100::/64'), 'reserved'],
  [block('2001:db8::/32'), 'documentation'],
  [block('3fff::/20'), 'documentation'],
  [block('2001:2::/48'), 'benchmarking'],
  [block('2001::/23'), 'reserved'],
  [block('fc00::/7'), 'private'],
  [block('fec0::/10'), 'private'],
  [block('fe80::/10'), 'link_local'],
  [block('ff00::/8'), 'multicast'],
];
/** Global unicast: the only IPv6 space a public server can have. */
const IPV6_GLOBAL = block('2000::/3');

/** Whether a public unicast address, or why not. */
export function classifyAddress(address: IpAddress): Verdict {
  if (address.family === 4) {
    const hit = IPV4_DENY.find(([b]) => inBlock(address, b));
    return hit ? { allowed: false, reason: hit[1] } : { allowed: true, by: 'public' };
  }
  // :: and ::1 first: they lie inside the IPv4-compatible block.
  if (inBlock(address, IPV6_UNSPECIFIED)) return { allowed: false, reason: 'unspecified' };
  if (inBlock(address, IPV6_LOOPBACK)) return { allowed: false, reason: 'loopback' };
  const embedded = IPV6_EMBEDDED.find(([b]) => inBlock(address, b));
  const compatible = !embedded && inBlock(address, IPV4_COMPATIBLE);
  if (embedded || compatible) {
    const [, via, shift] = embedded ?? [IPV4_COMPATIBLE, 'ipv4_compatible' as const, 0n];
    const inner = classifyAddress(low32({ family: 6, value: address.value >> shift }));
    return inner.allowed ? inner : { allowed: false, reason: inner.reason, via };
  }
  const hit = IPV6_DENY.find(([b]) => inBlock(address, b));
  if (hit) return { allowed: false, reason: hit[1] };
  return inBlock(address, IPV6_GLOBAL) ? { allowed: true, by: 'public' } : { allowed: false, reason: 'reserved' };
}

/** A host name as compared: lower case, without a trailing dot. */
export function normaliseHostName(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

const HOST_NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

export interface AllowList {
  blocks: IpBlock[];
  /** Exact host names. */
  names: Set<string>;
  /** `*.corp.example` entries, kept as `.corp.example`. */
  suffixes: string[];
}

/** Parses OUTBOUND_ALLOW's entries; throws naming the first entry that is neither a block, an address nor a host name. */
export function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { blocks: [], names: new Set(), suffixes: [] };
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const b = parseBlock(entry);
    if (b) {
      list.blocks.push(b);
      continue;
    }
    const name = normaliseHostName(entry);
    if (entry.includes('/') || !HOST_NAME.test(name)) throw new Error(`"${entry}" is neither a CIDR block, an IP address nor a host name`);
    if (name.startsWith('*.')) list.suffixes.push(name.slice(1));
    else list.names.add(name);
  }
  return list;
}

export class OutboundPolicy {
  constructor(private readonly allow: AllowList = parseAllowList([])) {}

  /** A policy opening OUTBOUND_ALLOW's entries (see parseAllowList). */
  static fromEntries(entries: readonly string[]): OutboundPolicy {
    return new OutboundPolicy(parseAllowList(entries));
  }

  /** Whether OUTBOUND_ALLOW names this host (then it is reached whatever it resolves to). */
  allowsHostName(host: string): boolean {
    const name = normaliseHostName(host);
    return this.allow.names.has(name) || this.allow.suffixes.some((s) => name.endsWith(s));
  }

  /** The verdict on connecting to `address` (text, IPv6 with or without brackets). */
  checkAddress(address: string): Verdict {
    const ip = parseIp(address);
    if (!ip) return { allowed: false, reason: 'not_an_address' };
    if (this.allowsAddress(ip)) return { allowed: true, by: 'allow_list' };
    return classifyAddress(ip);
  }

  private allowsAddress(ip: IpAddress): boolean {
    if (this.allow.blocks.some((b) => inBlock(ip, b))) return true;
    // ::ffff:a.b.c.d is the socket destination a.b.c.d: IPv4 entries cover it.
    const mapped = ip.family === 6 && inBlock(ip, IPV6_EMBEDDED[0]![0]);
    return mapped && this.allow.blocks.some((b) => inBlock(low32(ip), b));
  }
}

/**
 * What a refusal tells the user besides the host: that only public addresses are reached, and the
 * setting an administrator changes to reach more (set the same in every process that fetches).
 */
export const NOT_ALLOWED_HINT = ' (only public addresses are fetched; an administrator can allow more with OUTBOUND_ALLOW)';

/**
 * A request refused by the policy. Its message names the host only (and the setting that decides);
 * the address and the reason are for the server log, not for the user (see refresh-failure.ts).
 */
export class DestinationNotAllowedError extends Error {
  readonly code = 'ERR_DESTINATION_NOT_ALLOWED';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: RefusalReason,
    readonly via?: Embedding,
  ) {
    super(`${host} is not an allowed destination${NOT_ALLOWED_HINT}`);
    this.name = 'DestinationNotAllowedError';
  }

  /** For log lines: where the name led and why that is refused. */
  get detail(): string {
    return `${this.host} → ${this.address}: ${this.reason}${this.via ? ` (${this.via})` : ''}`;
  }
}

/** Throws DestinationNotAllowedError unless `address` (which `host` resolved to, or is) may be connected to. */
export function assertAllowed(policy: OutboundPolicy, host: string, address: string): void {
  const verdict = policy.checkAddress(address);
  if (!verdict.allowed) throw new DestinationNotAllowedError(host, address, verdict.reason, verdict.via);
}
