/**
 * Is a proxy usable for the marketplace? A GET of the site's health-check URL through it,
 * within a timeout: healthy when the site answers 2xx or 3xx. A proxy that is down, refuses
 * us (407), cannot reach the site (502/504) or whose address the site already blocks (403/429)
 * is not switched to.
 *
 * http(s) proxies are checked with the request Chromium would make: an absolute-form GET for
 * http targets, a CONNECT tunnel for https targets. SOCKS proxies are only checked for
 * reachability (a TCP connect).
 *
 * Not routed through the outbound policy (src/net/outbound-policy.ts), on purpose: it connects
 * only to a PROXY_LIST entry and asks it only for the site's health-check URL (CRAWL_BASE_URL),
 * both the operator's own configuration, and it follows no redirect. No user-given URL reaches it.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { ProxyConfig } from './proxy-url.js';

export interface HealthCheckResult {
  healthy: boolean;
  detail: string;
}

function authHeader(proxy: ProxyConfig): Record<string, string> {
  if (!proxy.username) return {};
  return { 'proxy-authorization': `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}` };
}

const verdict = (status: number | undefined): HealthCheckResult => ({
  healthy: status !== undefined && status >= 200 && status < 400,
  detail: `HTTP ${status}`,
});

export function checkProxy(proxy: ProxyConfig, targetUrl: string, timeoutMs: number): Promise<HealthCheckResult> {
  return new Promise<HealthCheckResult>((resolve) => {
    let settled = false;
    const sockets: net.Socket[] = [];
    const done = (r: HealthCheckResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const s of sockets) s.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ healthy: false, detail: `no answer within ${timeoutMs} ms` }), timeoutMs);
    const fail = (err: Error) => done({ healthy: false, detail: err.message });
    const target = new URL(targetUrl);

    if (proxy.protocol === 'socks4' || proxy.protocol === 'socks5') {
      const s = net.connect(proxy.port, proxy.host, () => done({ healthy: true, detail: 'reachable (SOCKS: TCP only)' }));
      sockets.push(s);
      s.on('error', fail);
      return;
    }
    const proxyTransport = proxy.protocol === 'https' ? https : http;
    if (target.protocol === 'http:') {
      const req = proxyTransport.request({
        host: proxy.host,
        port: proxy.port,
        method: 'GET',
        path: target.toString(),
        headers: { host: target.host, ...authHeader(proxy) },
        agent: false,
      });
      req.on('socket', (s) => sockets.push(s));
      req.on('response', (res) => {
        res.resume();
        done(verdict(res.statusCode));
      });
      req.on('error', fail);
      req.end();
      return;
    }
    const port = Number(target.port || 443);
    const connect = proxyTransport.request({
      host: proxy.host,
      port: proxy.port,
      method: 'CONNECT',
      path: `${target.hostname}:${port}`,
      headers: { host: `${target.hostname}:${port}`, ...authHeader(proxy) },
      agent: false,
    });
    connect.on('socket', (s) => sockets.push(s));
    connect.on('error', fail);
    connect.on('connect', (res, socket) => {
      sockets.push(socket);
      if (res.statusCode !== 200) return done({ healthy: false, detail: `CONNECT answered HTTP ${res.statusCode}` });
      const req = https.request({
        host: target.hostname,
        path: `${target.pathname}${target.search}`,
        method: 'GET',
        agent: false,
        createConnection: () => tls.connect({ socket, servername: target.hostname }),
      });
      req.on('response', (r) => {
        r.resume();
        done(verdict(r.statusCode));
      });
      req.on('error', fail);
      req.end();
    });
    connect.end();
  });
}
