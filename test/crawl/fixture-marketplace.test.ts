/**
 * The fixture marketplace over HTTP, as anyone on the machine could reach it: the instance the
 * platform serves for its demo (`control: false`) has no control routes, and whatever keywords a
 * client searches, its memory stays bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_KEYWORDS } from '../../src/services/fixture-marketplace/catalog.js';
import { FixtureMarketplace, MAX_KEYWORD_LENGTH } from '../../src/services/fixture-marketplace/server.js';

describe('fixture marketplace without control routes', () => {
  let market: FixtureMarketplace;
  beforeAll(async () => {
    market = await FixtureMarketplace.start({ control: false, itemsPerPage: 5, pages: 1 });
  });
  afterAll(() => market?.stop());

  it('answers 404 to every control route and keeps its data', async () => {
    const before = await (await fetch(`${market.url}/search?keyword=kept`)).text();
    for (const route of ['behaviour', 'sell', 'price', 'list', 'reset']) {
      const res = await fetch(`${market.url}/__fixture/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"rules":[]}' });
      expect(res.status, route).toBe(404);
    }
    expect((await fetch(`${market.url}/__fixture/requests`)).status).toBe(404);
    expect(await (await fetch(`${market.url}/search?keyword=kept`)).text()).toBe(before);
  });

  it('holds at most its keyword limit however many distinct keywords are searched, and refuses over-long ones', async () => {
    for (let i = 0; i < 2_000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => fetch(`${market.url}/search?keyword=flood-${i + j}`).then((r) => r.text())));
    }
    expect(market.catalog.keywordCount).toBe(DEFAULT_MAX_KEYWORDS);
    expect((await fetch(`${market.url}/search?keyword=${'é'.repeat(MAX_KEYWORD_LENGTH)}`)).status).toBe(200);
    expect((await fetch(`${market.url}/search?keyword=${'é'.repeat(MAX_KEYWORD_LENGTH + 1)}`)).status).toBe(400);
  });
});
