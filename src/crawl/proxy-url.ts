/**
 * A proxy from PROXY_LIST: what Chromium's --proxy-server takes (no credentials there), the
 * credentials for page.authenticate, and a form without the password for logs and metrics.
 */
export interface ProxyConfig {
  /** Position in PROXY_LIST. */
  index: number;
  /** scheme://host:port for --proxy-server. */
  server: string;
  protocol: 'http' | 'https' | 'socks4' | 'socks5';
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** The URL without its password. */
  label: string;
}

const DEFAULT_PORTS = { http: 80, https: 443, socks4: 1080, socks5: 1080 } as const;

export function parseProxy(text: string, index: number): ProxyConfig {
  let url: URL;
  try {
    url = new URL(text.includes('://') ? text : `http://${text}`);
  } catch {
    throw new Error(`PROXY_LIST: "${text}" is not a proxy URL (http://[user:pass@]host:port or socks5://host:port)`);
  }
  const protocol = url.protocol.replace(/:$/, '');
  if (!(protocol in DEFAULT_PORTS)) throw new Error(`PROXY_LIST: unsupported proxy scheme "${protocol}" in entry ${index + 1}`);
  const p = protocol as ProxyConfig['protocol'];
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[p];
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const hostPort = `${url.hostname}:${port}`;
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  return {
    index,
    server: `${p}://${hostPort}`,
    protocol: p,
    host,
    port,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    label: `${p}://${username ? `${username}@` : ''}${hostPort}`,
  };
}
