/**
 * Finding 6: ids out of range (`/api/feeds/99999999999`, `/api/ips/3000000000`, schedule-feed
 * `{"feed_id":"9999999999"}`) answered 500, and `/api/feeds/1e3` was read as 1000, `0x10` as 16.
 * Now an id is a decimal integer within its column's range, else 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('ids', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'] });
    // Feeds 1..16 exist, so that a misread id would find one.
    for (let i = 1; i <= 16; i++) expect((await t.api.post('/api/feeds', { url: `https://feeds.example.com/${i}.xml` })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  it("refuses ids out of their column's range with 400 naming the field", async () => {
    for (const [method, path, field] of [
      ['GET', '/api/feeds/99999999999', 'id'],
      ['GET', '/api/feeds/2147483648', 'id'],
      ['GET', '/api/ips/3000000000', 'id'],
      ['PATCH', '/api/ips/3000000000', 'id'],
      ['GET', '/api/feeds/9999999999999999999999/articles', 'id'],
      ['PATCH', '/api/users/0', 'id'],
      ['DELETE', '/api/api-keys/2147483648', 'id'],
    ] as const) {
      const res = await t.api.request(method, path, method === 'PATCH' ? (path.startsWith('/api/ips') ? { weight: 1 } : { disabled: true }) : undefined);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error.field, `${method} ${path}`).toBe(field);
    }
    const schedule = await t.api.post('/api/queue/schedule-feed', { feed_id: '9999999999' });
    expect(schedule.status).toBe(400);
    expect(schedule.body.error.field).toBe('feed_id');
    const huge = await t.api.post('/api/queue/schedule-feed', { feed_id: 1e20 });
    expect(huge.status).toBe(400);
    expect(huge.body.error.field).toBe('feed_id');
  });

  it('reads ids in decimal digits only: 1e3, 0x10, +16, 16.0 and " 16" are refused, not read as numbers', async () => {
    for (const id of ['1e3', '0x10', '+16', '16.0', '%2016', '-1', '1_0', '0b1', 'Infinity']) {
      const res = await t.api.get(`/api/feeds/${id}`);
      expect(res.status, id).toBe(400);
      expect(res.body.error.field, id).toBe('id');
    }
    expect((await t.api.get('/api/feeds/16')).body.id).toBe(16);
    for (const q of ['limit=1e2', 'limit=0x10', 'limit=', 'limit=%2010']) {
      const res = await t.api.get(`/api/feeds/1/articles?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.field, q).toBe('limit');
    }
    const schedule = await t.api.post('/api/queue/schedule-feed', { feed_id: '0x10' });
    expect(schedule.status).toBe(400);
    expect(schedule.body.error.field).toBe('feed_id');
  });
});
