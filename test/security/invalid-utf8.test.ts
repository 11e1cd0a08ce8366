/**
 * Issue 26: bytes that are not UTF-8 in a JSON body were decoded into U+FFFD and stored changed
 * (POST /api/api-keys, PATCH /api/ips/:id answered 2xx with the name altered). Now such a body is
 * a 400 `invalid_text` naming the field the bytes are in, and so is a header value that is not
 * UTF-8 (naming the header); nothing is written. Text that is UTF-8, U+FFFD itself included, is
 * stored as sent.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

/** A request with raw bytes: node's fetch would encode a string body, and refuses such header values. */
function raw(
  t: TestPlatform,
  method: string,
  path: string,
  body: Buffer | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const url = new URL(t.api.baseUrl + path);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname,
        headers: { authorization: `Bearer ${t.api.token}`, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** JSON text with raw bytes spliced in where `@` stands. */
const withBytes = (json: string, bytes: number[]) => {
  const [before, after] = json.split('@') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
};

describe('text that is not UTF-8', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
  });
  afterAll(() => t?.stop());

  it('refuses a body with bytes that are not UTF-8, naming the field, and writes nothing', async () => {
    const { prisma } = t.platform.ctx.db;
    const keys = await prisma.apiKey.count();
    const key = await raw(t, 'POST', '/api/api-keys', withBytes('{"name":"key @ one"}', [0xff]));
    expect(key.status).toBe(400);
    expect(key.body.error).toMatchObject({ code: 'invalid_text', field: 'name' });
    expect(await prisma.apiKey.count()).toBe(keys);

    const ip = await t.api.post('/api/ips', { name: 'Frieren', keyword: 'frieren' });
    expect(ip.status).toBe(201);
    for (const bytes of [[0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const res = await raw(t, 'PATCH', `/api/ips/${ip.body.id}`, withBytes('{"name":"Fri@eren"}', bytes));
      expect(res.status, String(bytes)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_text', field: 'name' });
    }
    expect((await prisma.ip.findUniqueOrThrow({ where: { id: ip.body.id } })).name).toBe('Frieren');

    const titles = await prisma.poolTitle.count();
    const pool = await raw(t, 'POST', '/api/pools/titles/4/items', withBytes('{"items":[{"text":"fine","batchId":1},{"text":"b@d","batchId":1}]}', [0xfe]));
    expect(pool.status).toBe(400);
    expect(pool.body.error.field).toBe('items.1.text');
    expect(await prisma.poolTitle.count()).toBe(titles);

    const login = await raw(t, 'POST', '/api/auth/login', withBytes('{"username":"adm@n","password":"x"}', [0x80]));
    expect(login.status).toBe(400);
    expect(login.body.error.field).toBe('username');
  });

  it('refuses a header value that is not UTF-8, naming the header, on authenticated routes and body routes', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString('latin1'); // "café" in latin1: not UTF-8
    const feeds = await raw(t, 'GET', '/api/feeds', undefined, { 'x-client-note': latin1 });
    expect(feeds.status).toBe(400);
    expect(feeds.body.error).toMatchObject({ code: 'invalid_text', field: 'x-client-note' });
    const login = await raw(t, 'POST', '/api/auth/login', Buffer.from('{"username":"admin","password":"x"}'), { 'user-agent': latin1 });
    expect(login.status).toBe(400);
    expect(login.body.error.field).toBe('user-agent');
    // UTF-8 in a header is fine.
    const utf8 = Buffer.from('café', 'utf8').toString('latin1');
    expect((await raw(t, 'GET', '/api/feeds', undefined, { 'x-client-note': utf8 })).status).toBe(200);
  });

  it('stores UTF-8 text as sent, U+FFFD included', async () => {
    const sent = 'key \ufffd é 中 😀';
    const res = await raw(t, 'POST', '/api/api-keys', Buffer.from(JSON.stringify({ name: sent }), 'utf8'));
    expect(res.status).toBe(201);
    expect((await t.platform.ctx.db.prisma.apiKey.findUniqueOrThrow({ where: { id: res.body.id } })).name).toBe(sent);
  });
});
