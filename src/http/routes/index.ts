/**
 * Every route of the REST API. Domain route modules are added here; the OpenAPI document is
 * built from this list.
 */
import type { Accounts } from '../../auth/accounts.js';
import { ApiKeys } from '../../auth/api-keys.js';
import type { AuthService } from '../../auth/auth-service.js';
import type { PlatformContext } from '../../context.js';
import type { AnyRoute } from '../route.js';
import { authRoutes } from './auth-routes.js';
import { clusterRoutes } from './cluster-routes.js';
import { feedRoutesOf } from './feed-routes.js';
import { ipRoutes } from './ip-routes.js';
import { jobRoutes } from './job-routes.js';
import { messageRoutesOf } from './message-routes.js';
import { poolRoutes } from './pool-routes.js';
import { userRoutes } from './user-routes.js';

export interface RouteDeps {
  ctx: PlatformContext;
  auth: AuthService;
  accounts: Accounts;
}

export function allRoutes({ ctx, auth, accounts }: RouteDeps): AnyRoute[] {
  const apiKeys = new ApiKeys({ prisma: ctx.db.prisma, states: auth.states });
  return [
    ...authRoutes(auth, accounts),
    ...userRoutes(accounts, apiKeys),
    ...jobRoutes(ctx),
    ...feedRoutesOf(ctx),
    ...ipRoutes(ctx),
    ...poolRoutes(ctx),
    ...messageRoutesOf(ctx),
    ...clusterRoutes(ctx),
  ];
}
