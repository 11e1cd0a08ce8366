import { describe, expect, it } from 'vitest';
import { parseProxy } from './proxy-url.js';

describe('parseProxy', () => {
  it('splits server and credentials; the label has no password', () => {
    expect(parseProxy('http://user:p%40ss@10.0.0.5:8080', 1)).toEqual({
      index: 1,
      server: 'http://10.0.0.5:8080',
      protocol: 'http',
      host: '10.0.0.5',
      port: 8080,
      username: 'user',
      password: 'p@ss',
      label: 'http://user@10.0.0.5:8080',
    });
  });

  it('defaults the scheme and the port', () => {
    expect(parseProxy('127.0.0.1:3128', 0).server).toBe('http://127.0.0.1:3128');
    expect(parseProxy('socks5://proxy.example', 0).server).toBe('socks5://proxy.example:1080');
  });

  it('refuses what Chromium cannot use', () => {
    expect(() => parseProxy('ftp://x:21', 2)).toThrow(/unsupported proxy scheme "ftp" in entry 3/);
  });
});
