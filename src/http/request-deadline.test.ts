/**
 * The request wrapper's deadline on a real node:http server on loopback, with routes declared
 * here whose handlers wait until the test lets them go, and the dependency monitor's verdict given
 * by the test (the monitor itself and real outages: dependency-monitor.test.ts and
 * test/api/outage-latency.test.ts):
 *
 * - past the outage deadline while a dependency is down, a request is answered 503 naming it,
 *   with Retry-After; its handler's later outcome is dropped and logged, the connection goes on;
 * - with nothing down it runs on until the request deadline: 503 `request_timeout`;
 * - a request answered while its body was still coming never reaches its handler;
 * - an express mount writing after the deadline answered neither writes twice nor crashes.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { Metrics } from '../metrics/metrics.js';
import { clientAddress } from './client-address.js';
import { dispatcher } from './dispatcher.js';
import type { Dependency } from './error-reply.js';
import { expressApp, serveExpress } from './express-mount.js';
import { RequestWrapper } from './request-wrapper.js';
import { defineRoute } from './route.js';

const OUTAGE_MS = 300;
const REQUEST_MS = 1500;

const logLines: { msg: string; reqId?: string; outcome?: string; reason?: string }[] = [];
let down: Dependency | undefined;
/** Handlers waiting to be let go, and how many handlers ran. */
const waiting: (() => void)[] = [];
let handled = 0;
const letGo = () => {
  for (const go of waiting.splice(0)) go();
};
const held = () => new Promise<void>((resolve) => waiting.push(resolve));

const routes = [
  defineRoute({
    method: 'get',
    path: '/slow',
    tag: 't',
    summary: 's',
    access: 'public',
    responses: {},
    handler: async () => {
      handled++;
      await held();
      return { body: { late: true } };
    },
  }),
  defineRoute({ method: 'get', path: '/fast', tag: 't', summary: 's', access: 'public', responses: {}, handler: () => ({ body: { fast: true } }) }),
  defineRoute({
    method: 'post',
    path: '/write',
    tag: 't',
    summary: 's',
    access: 'public',
    body: z.strictObject({ n: z.number() }),
    responses: {},
    handler: () => {
      handled++;
      return { status: 201, body: { written: true } };
    },
  }),
];

let server: http.Server;
let wrapper: RequestWrapper;
let port: number;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  wrapper = new RequestWrapper({
    logger: pino({ level: 'info' }, sink),
    metrics: new Metrics({ defaultMetrics: false }),
    accessLog: false,
    outageDeadlineMs: OUTAGE_MS,
    requestDeadlineMs: REQUEST_MS,
    dependencyDown: () => down,
  });
  const dispatch = dispatcher(routes, { authenticate: () => undefined as never, bodyLimit: 1024, clientAddress: clientAddress({ kind: 'none' }) });
  const board = expressApp();
  board.get('/admin/slow', async (_req, res) => {
    await held();
    res.json({ late: true }); // after the deadline answered: headers already sent
  });
  const mount = { prefix: '/admin', app: board };
  server = http.createServer((req, res) => {
    const ex = wrapper.begin(req, res);
    if (dispatch(ex)) return;
    if (ex.pathname.startsWith('/admin')) serveExpress(mount, ex);
    else ex.fail(new NotFoundError('not_found', 'none'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  letGo();
  wrapper.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Requests on one kept-alive connection, one after the other. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
afterAll(() => agent.destroy());

function request(path: string): Promise<{ status: number; body: any; retryAfter: string | undefined; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text), retryAfter: res.headers['retry-after'] as string, ms: performance.now() - started }),
        );
      })
      .on('error', reject);
  });
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('the request deadline', () => {
  it('answers a request its handler holds 503 naming the dependency down, drops the late outcome and goes on', async () => {
    down = 'database';
    const answer = await request('/slow');
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'database_unavailable' } }, retryAfter: '5' });
    expect(answer.ms).toBeGreaterThanOrEqual(OUTAGE_MS);
    const deadlineLog = logLines.find((l) => l.msg.startsWith('request answered 503 at its deadline'));
    expect(deadlineLog?.reason).toBe('database');
    letGo();
    await until(() => logLines.some((l) => l.msg.startsWith('a handler ended after its request was answered') && l.reqId === deadlineLog?.reqId));
    // The same kept-alive connection: nothing of the late answer came over it.
    expect(await request('/fast')).toMatchObject({ status: 200, body: { fast: true } });
  });

  it('lets a request run on while nothing is down, up to the request deadline: 503 request_timeout', async () => {
    down = undefined;
    const answer = await request('/slow');
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'request_timeout' } }, retryAfter: '5' });
    expect(answer.ms).toBeGreaterThanOrEqual(REQUEST_MS);
    letGo();
  });

  it('does not run the handler of a request answered while its body was still coming', async () => {
    down = 'redis';
    handled = 0;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const body = '{"n":1}';
    socket.write(`POST /write HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{"n"`);
    let received = '';
    socket.on('data', (d) => (received += d));
    await until(() => received.includes('\r\n\r\n'));
    expect(received).toMatch(/^HTTP\/1\.1 503 /);
    expect(received).toContain('redis_unavailable');
    // The rest of the body, then another request on the connection: by its answer, the first
    // request's body has been read and its handler would have run.
    socket.write(':1}');
    socket.write('GET /fast HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(() => received.includes('{"fast":true}'));
    expect(handled).toBe(0);
    socket.destroy();
  });

  it('keeps an express mount that writes after the deadline from writing twice or failing the process', async () => {
    down = 'redis';
    const answer = await request('/admin/slow');
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'redis_unavailable' } } });
    letGo();
    await until(() => logLines.some((l) => l.msg.startsWith('a handler ended after') && String(l.outcome).includes('Cannot set headers')));
    expect(await request('/fast')).toMatchObject({ status: 200 });
  });
});
