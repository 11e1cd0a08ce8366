/**
 * The crawler role as the runtime starts it. With CRAWL_SITE=fixture and CRAWL_BASE_URL=embedded
 * (the defaults) the runtime first serves the fixture marketplace (src/services/fixture-marketplace)
 * on a free 127.0.0.1 port, a service for demos like the embedded Redis and PostgreSQL, and the
 * crawler crawls it: a fresh `npm start` crawls something without the internet. Any other
 * CRAWL_BASE_URL is crawled as it is.
 *
 * The fixture marketplace is a test and demo service: a production start (NODE_ENV=production)
 * never serves it (the crawler role refuses to start, naming CRAWL_SITE), and the one served here
 * has no control routes (nobody on the machine can fake its data) and bounded memory.
 *
 * Stop order: the crawler (its jobs, then its browsers), then the marketplace it crawled.
 */
import { EMBEDDED_FIXTURE_URL } from '../config/crawl.js';
import { ConfigError, type Config } from '../config/index.js';
import type { PlatformContext } from '../context.js';
import { startCrawlerRole, type CrawlerRoleHandle } from '../crawl/role.js';
import { FixtureMarketplace } from '../services/fixture-marketplace/server.js';

/**
 * The embedded fixture marketplace trades a little (per keyword: 3 items sell and 4 are listed
 * every 5 minutes), so the demo's repeated crawls see inflow and outflow.
 */
const EMBEDDED_MARKET_ACTIVITY = { everyMs: 5 * 60_000, sold: 3, listed: 4 };

/** Refuses, before anything starts, a production crawler that would serve the fixture marketplace. */
export function assertCrawlerProductionSafe(config: Config): void {
  const c = config.crawl;
  if (config.core.nodeEnv !== 'production' || c.site !== 'fixture' || c.baseUrl !== EMBEDDED_FIXTURE_URL) return;
  throw new ConfigError(
    'CRAWL_SITE',
    'the fixture marketplace (CRAWL_SITE=fixture with CRAWL_BASE_URL=embedded) is a test and demo service that a production start does not run: set CRAWL_SITE=mercari, or CRAWL_BASE_URL to the marketplace to crawl',
  );
}

export async function startCrawler(ctx: PlatformContext): Promise<CrawlerRoleHandle> {
  const c = ctx.config.crawl;
  if (c.site !== 'fixture' || c.baseUrl !== EMBEDDED_FIXTURE_URL) return startCrawlerRole(ctx);
  assertCrawlerProductionSafe(ctx.config);
  const market = await FixtureMarketplace.start({ activity: EMBEDDED_MARKET_ACTIVITY, control: false });
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
