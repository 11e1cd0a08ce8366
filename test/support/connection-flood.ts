/**
 * Connection floods on loopback, for the connection-limit test (test/api/connection-limits.test.ts)
 * and benchmark (bench/connections.ts): many connections that send nothing (idle) or the start of
 * a request and never its end (slow headers), from given loopback source addresses, and /healthz
 * timed over a fresh connection beside them.
 */
import http from 'node:http';
import net from 'node:net';

export interface FloodOptions {
  port: number;
  count: number;
  /** Source addresses (127.0.0.0/8), used in turn. */
  from: string[];
  /** Send `GET / HTTP/1.1` and one header, never the blank line that ends them. */
  slowHeaders?: boolean;
  /** Connects in flight at once (more overflow the listen backlog: SYNs are retried a second later). */
  concurrency?: number;
}

export interface Flood {
  /** Connections opened (the handshake completed). */
  opened: number;
  /** Connections that could not be opened. */
  failed: number;
  /** Opened connections still open now. */
  open(): number;
  /** Opened connections the server has closed since (evicted, refused, timed out). */
  closedByServer(): number;
  /** Closes every connection still open. */
  close(): void;
}

export async function flood(options: FloodOptions): Promise<Flood> {
  const sockets: net.Socket[] = [];
  let opened = 0;
  let failed = 0;
  let closedByServer = 0;
  let closing = false;
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const socket = net.connect({ port: options.port, host: '127.0.0.1', localAddress: options.from[i % options.from.length] });
      let connected = false;
      socket.on('error', () => undefined);
      socket.resume(); // read (and drop) what the server sends, so that its close is seen
      socket.once('connect', () => {
        connected = true;
        opened++;
        sockets.push(socket);
        socket.once('close', () => {
          if (!closing) closedByServer++;
        });
        if (options.slowHeaders) socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        resolve();
      });
      socket.once('close', () => {
        if (!connected) failed++;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: options.concurrency ?? 256 }, async () => {
      while (next < options.count) await one(next++);
    }),
  );
  return {
    opened,
    failed,
    open: () => sockets.filter((s) => !s.destroyed && !s.readableEnded).length,
    closedByServer: () => closedByServer,
    close: () => {
      closing = true;
      for (const s of sockets) s.destroy();
    },
  };
}

export interface HealthAnswer {
  status: number;
  ms: number;
  failure?: string;
}

/** GET /healthz over a new connection from `from`; status 0 with the failure when none came within `timeoutMs`. */
export function healthz(port: number, from = '127.0.0.1', timeoutMs = 10_000): Promise<HealthAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ status: 0, ms: performance.now() - started, failure: err.message }));
  });
}

/**
 * `n` /healthz one after the other; their latencies sorted, and the failures. `giveUpAfter`
 * failures in a row end the series early (a server that answers nothing).
 */
export async function healthzSeries(
  port: number,
  n: number,
  options: { from?: string; timeoutMs?: number; giveUpAfter?: number } = {},
): Promise<{ ms: number[]; failures: string[] }> {
  const ms: number[] = [];
  const failures: string[] = [];
  let inRow = 0;
  for (let i = 0; i < n && inRow < (options.giveUpAfter ?? Infinity); i++) {
    const a = await healthz(port, options.from, options.timeoutMs);
    if (a.status === 200) ms.push(a.ms);
    else failures.push(a.failure ?? `status ${a.status}`);
    inRow = a.status === 200 ? 0 : inRow + 1;
  }
  return { ms: ms.sort((a, b) => a - b), failures };
}

/** p50 / p99 / max of sorted latencies, rounded to 0.1 ms. */
export function summarize(sorted: number[]): string {
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  const r = (x: number) => Math.round(x * 10) / 10;
  return `p50 ${r(at(50))} ms, p99 ${r(at(99))} ms, max ${r(sorted.at(-1) ?? NaN)} ms`;
}

/** Loopback addresses 127.0.<a>.<b> from 127.0.1.1 on, `n` of them (the test's own 127.0.0.1 excluded). */
export function loopbackAddresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`);
}
