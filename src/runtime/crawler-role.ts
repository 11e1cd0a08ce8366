/**
 * The crawler role as the runtime starts it. With CRAWL_SITE=fixture and CRAWL_BASE_URL=embedded
 * (the defaults) the runtime first serves the fixture marketplace (src/services/fixture-marketplace)
 * on a free 127.0.0.1 port, a service for demos like the embedded Redis and PostgreSQL, and the
 * crawler crawls it: a fresh `npm start` crawls something without the internet. Any other
 * CRAWL_BASE_URL is crawled as it is.
 *
 * Stop order: the crawler (its jobs, then its browsers), then the marketplace it crawled.
 */
import { EMBEDDED_FIXTURE_URL } from '../config/crawl.js';
import type { PlatformContext } from '../context.js';
import { startCrawlerRole, type CrawlerRoleHandle } from '../crawl/role.js';
import { FixtureMarketplace } from '../services/fixture-marketplace/server.js';

/**
 * The embedded fixture marketplace trades a little (per keyword: 3 items sell and 4 are listed
 * every 5 minutes), so the demo's repeated crawls see inflow and outflow.
 */
const EMBEDDED_MARKET_ACTIVITY = { everyMs: 5 * 60_000, sold: 3, listed: 4 };

export async function startCrawler(ctx: PlatformContext): Promise<CrawlerRoleHandle> {
  const c = ctx.config.crawl;
  if (c.site !== 'fixture' || c.baseUrl !== EMBEDDED_FIXTURE_URL) return startCrawlerRole(ctx);
  const market = await FixtureMarketplace.start({ activity: EMBEDDED_MARKET_ACTIVITY });
  ctx.logger.child({ role: 'crawler' }).info({ url: market.url }, 'fixture marketplace serving (CRAWL_BASE_URL=embedded)');
  let role: CrawlerRoleHandle;
  try {
    role = await startCrawlerRole(ctx, market.url);
  } catch (err) {
    await market.stop();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    ...role,
    stop: () =>
      (stopping ??= (async () => {
        await role.stop();
        await market.stop();
      })()),
  };
}
