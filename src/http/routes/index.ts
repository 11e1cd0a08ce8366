/**
 * Every route of the REST API, over the services the runtime wires (src/runtime/api-wiring.ts).
 * Routes receive services, never the platform context. The OpenAPI document is built from this list.
 */
import type { AuthWiring } from '../../auth/wiring.js';
import type { ClusterView } from '../../coordination/wiring.js';
import type { FeedService } from '../../feeds/feed-service.js';
import type { MessageService } from '../../messages/message-service.js';
import type { RefusedMessagesApi } from '../../messages/wiring.js';
import type { IpService } from '../../pipeline/ip-service.js';
import type { PoolService } from '../../pools/pool-service.js';
import type { JobConsole } from '../../jobs/job-console.js';
import type { AnyRoute } from '../route.js';
import { authRoutes } from './auth-routes.js';
import { clusterRoutes } from './cluster-routes.js';
import { feedRoutes } from './feed-routes.js';
import { ipRoutes } from './ip-routes.js';
import { jobRoutes } from './job-routes.js';
import { messageRoutes, refusedMessageRoutes } from './message-routes.js';
import { poolRoutes } from './pool-routes.js';
import { userRoutes } from './user-routes.js';

export interface ApiServices {
  auth: AuthWiring;
  jobs: JobConsole;
  feeds: FeedService;
  ownsFeed: (userId: number, feedId: number) => Promise<boolean>;
  ips: IpService;
  ipWeights: { weightMin: number; weightMax: number };
  pools: PoolService;
  messages: MessageService;
  messageSettings: { maxContentBytes: number };
  refusedMessages: RefusedMessagesApi;
  cluster: ClusterView;
}

export function allRoutes(s: ApiServices): AnyRoute[] {
  return [
    ...authRoutes(s.auth.auth, s.auth.accounts),
    ...userRoutes(s.auth.accounts, s.auth.apiKeys),
    ...jobRoutes(s.jobs, s.ownsFeed),
    ...feedRoutes(s.feeds),
    ...ipRoutes(s.ips, s.ipWeights),
    ...poolRoutes(s.pools),
    ...messageRoutes(s.messages, s.messageSettings),
    ...refusedMessageRoutes(s.refusedMessages),
    ...clusterRoutes(s.cluster),
  ];
}
