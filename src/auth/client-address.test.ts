import { describe, expect, it } from 'vitest';
import { loginAddressKey } from './client-address.js';

describe('loginAddressKey', () => {
  it('keeps IPv4 addresses and unwraps IPv4-mapped ones', () => {
    expect(loginAddressKey('127.0.0.1')).toBe('127.0.0.1');
    expect(loginAddressKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(loginAddressKey('::FFFF:10.1.2.3')).toBe('10.1.2.3');
  });

  it('counts an IPv6 address as its /64, however it is written', () => {
    expect(loginAddressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(loginAddressKey('2001:0db8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(loginAddressKey('2001:db8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(loginAddressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(loginAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(loginAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('puts anything else under one key', () => {
    expect(loginAddressKey(undefined)).toBe('unknown');
    expect(loginAddressKey('not an address')).toBe('unknown');
  });
});
