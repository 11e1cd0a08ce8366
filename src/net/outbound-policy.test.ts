import { describe, expect, it } from 'vitest';
import { formatIp, parseBlock, parseIp } from './ip-address.js';
import { assertAllowed, DestinationNotAllowedError, NOT_ALLOWED_HINT, OutboundPolicy, parseAllowList } from './outbound-policy.js';

const closed = new OutboundPolicy();

describe('ip-address', () => {
  it('parses IPv4, IPv6 (compressed, bracketed, zoned, with a dotted tail) and nothing else', () => {
    expect(formatIp(parseIp('127.0.0.1')!)).toBe('127.0.0.1');
    expect(formatIp(parseIp('[::1]')!)).toBe('0:0:0:0:0:0:0:1');
    expect(formatIp(parseIp('::ffff:127.0.0.1')!)).toBe('0:0:0:0:0:ffff:7f00:1');
    expect(parseIp('::ffff:7f00:1')).toEqual(parseIp('::ffff:127.0.0.1'));
    expect(formatIp(parseIp('fe80::1%eth0')!)).toBe('fe80:0:0:0:0:0:0:1');
    expect(formatIp(parseIp('1:2:3:4:5:6:1.2.3.4')!)).toBe('1:2:3:4:5:6:102:304');
    for (const bad of ['localhost', '127.1', '0x7f000001', '256.0.0.1', '1::2::3', '', '[127.0.0.1]']) expect(parseIp(bad), bad).toBeUndefined();
  });

  it('parses blocks, masking host bits, and refuses bad prefixes', () => {
    expect(parseBlock('10.1.2.3/8')).toEqual({ family: 4, base: 10n << 24n, prefix: 8 });
    expect(parseBlock('::1')).toMatchObject({ family: 6, base: 1n, prefix: 128 });
    expect(parseBlock('0.0.0.0/0')).toEqual({ family: 4, base: 0n, prefix: 0 });
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1', 'x/8']) expect(parseBlock(bad), bad).toBeUndefined();
  });
});

describe('outbound policy: default deny', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['169.254.0.1', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.99', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link_local'],
    ['fe80::1%lo', 'link_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'], // local-use NAT64: outside 2000::/3
    ['::ffff:0:7f00:1', 'reserved'], // SIIT form, outside 2000::/3
  ])('refuses %s (%s)', (address, reason) => {
    expect(closed.checkAddress(address)).toEqual({ allowed: false, reason });
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback', 'ipv4_mapped'],
    ['::ffff:7f00:1', 'loopback', 'ipv4_mapped'],
    ['[::ffff:7f00:1]', 'loopback', 'ipv4_mapped'],
    ['::ffff:169.254.169.254', 'link_local', 'ipv4_mapped'],
    ['::ffff:10.0.0.1', 'private', 'ipv4_mapped'],
    ['::ffff:0.0.0.0', 'unspecified', 'ipv4_mapped'],
    ['::127.0.0.1', 'loopback', 'ipv4_compatible'],
    ['::a9fe:a9fe', 'link_local', 'ipv4_compatible'],
    ['64:ff9b::127.0.0.1', 'loopback', 'nat64'],
    ['64:ff9b::a9fe:a9fe', 'link_local', 'nat64'],
    ['64:ff9b::c0a8:101', 'private', 'nat64'],
    ['64:ff9b::6440:1', 'cgnat', 'nat64'],
    ['2002:7f00:1::', 'loopback', '6to4'],
    ['2002:a9fe:a9fe::1', 'link_local', '6to4'],
    ['2002:c0a8:0101:1::1', 'private', '6to4'],
    ['2002:e000:1::', 'multicast', '6to4'],
  ])('refuses %s: the IPv4 address it carries is %s (%s)', (address, reason, via) => {
    expect(closed.checkAddress(address)).toEqual({ allowed: false, reason, via });
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows the public address %s', (address) => {
    expect(closed.checkAddress(address)).toEqual({ allowed: true, by: 'public' });
  });

  it('refuses what is not an address', () => {
    expect(closed.checkAddress('localhost')).toEqual({ allowed: false, reason: 'not_an_address' });
  });

  it('assertAllowed throws an error naming the host, with the address and the reason for the log only', () => {
    expect(() => assertAllowed(closed, 'metadata.example', '169.254.169.254')).toThrow(DestinationNotAllowedError);
    let thrown: unknown;
    try {
      assertAllowed(closed, 'x.example', '::ffff:10.1.1.1');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DestinationNotAllowedError);
    const e = thrown as DestinationNotAllowedError;
    expect(e.message).toBe(`x.example is not an allowed destination${NOT_ALLOWED_HINT}`);
    expect(e.message).not.toMatch(/10\.1|private/);
    expect(e.detail).toBe('x.example → ::ffff:10.1.1.1: private (ipv4_mapped)');
    expect(() => assertAllowed(closed, 'example.org', '93.184.215.14')).not.toThrow();
  });
});

describe('outbound policy: OUTBOUND_ALLOW', () => {
  const policy = OutboundPolicy.fromEntries(['127.0.0.0/8', '::1', '10.1.0.0/16', 'fd00::/8', 'Feeds.Intranet', '*.corp.example']);

  it('opens the listed blocks and addresses, and the IPv4-mapped form of IPv4 entries', () => {
    for (const a of ['127.0.0.1', '127.0.0.2', '::1', '10.1.200.3', 'fd00::5', '::ffff:127.0.0.1', '::ffff:10.1.0.1'])
      expect(policy.checkAddress(a), a).toEqual({ allowed: true, by: 'allow_list' });
  });

  it('keeps refusing everything else, NAT64 and 6to4 forms of listed addresses included', () => {
    for (const a of ['10.2.0.1', '169.254.169.254', '192.168.0.1', 'fe80::1', 'fc00::1', '64:ff9b::7f00:1', '2002:7f00:1::'])
      expect(policy.checkAddress(a).allowed, a).toBe(false);
  });

  it('opens host names exactly, or every name under a *. domain (not the domain itself)', () => {
    expect(policy.allowsHostName('feeds.intranet')).toBe(true);
    expect(policy.allowsHostName('FEEDS.intranet.')).toBe(true);
    expect(policy.allowsHostName('x.feeds.intranet')).toBe(false);
    expect(policy.allowsHostName('a.corp.example')).toBe(true);
    expect(policy.allowsHostName('b.a.corp.example')).toBe(true);
    expect(policy.allowsHostName('corp.example')).toBe(false);
    expect(policy.allowsHostName('evilcorp.example')).toBe(false);
    expect(closed.allowsHostName('localhost')).toBe(false);
  });

  it('refuses malformed entries, naming them', () => {
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow(/"10.0.0.0\/33"/);
    expect(() => parseAllowList(['http://x'])).toThrow(/"http:\/\/x"/);
    expect(() => parseAllowList(['a b'])).toThrow(/"a b"/);
    expect(() => parseAllowList(['*'])).toThrow();
    expect(parseAllowList([' ', ''])).toEqual({ blocks: [], names: new Set(), suffixes: [] });
  });
});
