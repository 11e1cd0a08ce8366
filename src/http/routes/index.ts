/**
 * Every route of the REST API. Domain route modules are added here; the OpenAPI document is
 * built from this list.
 */
import type { AuthService } from '../../auth/auth-service.js';
import type { PlatformContext } from '../../context.js';
import { JobInspector } from '../../queues/job-inspector.js';
import type { AnyRoute } from '../route.js';
import { authRoutes } from './auth-routes.js';
import { clusterRoutes } from './cluster-routes.js';
import { feedRoutesOf } from './feed-routes.js';
import { ipRoutes } from './ip-routes.js';
import { jobRoutes } from './job-routes.js';
import { messageRoutesOf } from './message-routes.js';
import { poolRoutes } from './pool-routes.js';

export interface RouteDeps {
  ctx: PlatformContext;
  auth: AuthService;
}

export function allRoutes({ ctx, auth }: RouteDeps): AnyRoute[] {
  return [...authRoutes(auth), ...jobRoutes(new JobInspector(ctx.queues)), ...feedRoutesOf(ctx), ...ipRoutes(ctx), ...poolRoutes(ctx), ...messageRoutesOf(ctx), ...clusterRoutes(ctx)];
}
