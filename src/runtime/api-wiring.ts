/**
 * The API's composition root: each domain's wiring (src/<domain>/wiring.ts) builds its services
 * from the platform context; the job console gets the chains' replays (a dead crawl or refresh
 * replays through its chain: never a second pending crawl or refresh; a delayed crawl promoted
 * runs as its IP's crawl now). The routes and Bull Board (src/runtime/api-role.ts) receive these.
 */
import type { AuthWiring } from '../auth/wiring.js';
import type { PlatformContext } from '../context.js';
import { wireCoordinationApi } from '../coordination/wiring.js';
import { wireFeedsApi } from '../feeds/wiring.js';
import type { ApiServices } from '../http/routes/index.js';
import { wireMessagesApi } from '../messages/wiring.js';
import { wirePipeline, wirePipelineApi } from '../pipeline/wiring.js';
import { wirePoolsApi } from '../pools/wiring.js';
import { queues } from '../queues/definitions.js';
import { JobInspector, type PromoteHandler, type ReplayHandler } from '../queues/job-inspector.js';

export function wireApi(ctx: PlatformContext, auth: AuthWiring): ApiServices {
  const feeds = wireFeedsApi(ctx);
  const messages = wireMessagesApi(ctx);
  const pipeline = wirePipeline(ctx);
  const crawls = pipeline.scheduler;
  const replay = new Map<string, ReplayHandler>([
    [queues.crawl.name, (job) => crawls.replay('crawl', job.id!)],
    [queues.crawlResult.name, (job) => crawls.replay('crawl-result', job.id!)],
    [queues.feedRefresh.name, (job) => feeds.replayDead(job.id!)],
  ]);
  const promote = new Map<string, PromoteHandler>([[queues.crawl.name, (job) => crawls.promote(job.id!)]]);
  return {
    auth,
    jobs: new JobInspector({ queues: ctx.queues, redis: ctx.redis, replay, promote }),
    feeds: feeds.service,
    ownsFeed: feeds.isOwnedBy,
    ips: wirePipelineApi(ctx, pipeline),
    ipWeights: ctx.config.pipeline,
    pools: wirePoolsApi(ctx),
    messages: messages.service,
    messageSettings: ctx.config.messages,
    refusedMessages: messages.refused,
    cluster: wireCoordinationApi(ctx),
  };
}
