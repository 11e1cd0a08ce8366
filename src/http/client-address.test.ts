import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, proxyTrust } from './client-address.js';

const request = (peer: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  it('is the peer without proxies, whatever X-Forwarded-For says', () => {
    const address = clientAddress(proxyTrust(0, []));
    expect(address(request('192.0.2.1', '203.0.113.5'))).toBe('192.0.2.1');
  });

  it('with trusted proxies: the right-most entry not among them, never a first entry the client wrote', () => {
    const address = clientAddress(proxyTrust(0, ['10.0.0.0/8', '127.0.0.1']));
    // The client wrote "1.2.3.4"; the proxy 10.0.0.2 appended the address it saw.
    expect(address(request('10.0.0.2', '1.2.3.4, 203.0.113.5'))).toBe('203.0.113.5');
    // Two proxies: the outer one (10.0.0.3) appended the client, the inner one (peer) appended 10.0.0.3.
    expect(address(request('10.0.0.2', 'spoofed, 203.0.113.5, 10.0.0.3'))).toBe('203.0.113.5');
    // Two X-Forwarded-For headers are one list.
    expect(address(request('10.0.0.2', ['1.2.3.4', '203.0.113.6']))).toBe('203.0.113.6');
    // An IPv4-mapped peer counts as its IPv4 address.
    expect(address(request('::ffff:127.0.0.1', '203.0.113.7'))).toBe('203.0.113.7');
    // All trusted: the leftmost; none given: the peer.
    expect(address(request('10.0.0.2', '10.0.0.9, 10.0.0.8'))).toBe('10.0.0.9');
    expect(address(request('10.0.0.2'))).toBe('10.0.0.2');
    // An entry that is not an address: the hop that wrote it is as far as is known.
    expect(address(request('10.0.0.2', '203.0.113.5, not-an-ip, 10.0.0.4'))).toBe('10.0.0.4');
  });

  it('with trusted proxies: ignores X-Forwarded-For from a peer that is not one of them', () => {
    const address = clientAddress(proxyTrust(0, ['10.0.0.0/8']));
    expect(address(request('198.51.100.4', '203.0.113.5'))).toBe('198.51.100.4');
  });

  it('with a hop count: that many entries from the right (true is one)', () => {
    const one = clientAddress(proxyTrust(1, []));
    expect(one(request('10.0.0.2', '1.2.3.4, 203.0.113.5'))).toBe('203.0.113.5');
    expect(one(request('10.0.0.2'))).toBe('10.0.0.2');
    const two = clientAddress(proxyTrust(2, []));
    expect(two(request('10.0.0.2', '1.2.3.4, 203.0.113.5, 10.0.0.3'))).toBe('203.0.113.5');
    expect(two(request('10.0.0.2', '203.0.113.5'))).toBe('203.0.113.5');
  });
});
