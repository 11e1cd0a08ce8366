/** The auth domain's wiring: token service, accounts and API keys, built once per API process. */
import type { PlatformContext } from '../context.js';
import { Accounts } from './accounts.js';
import { ApiKeys } from './api-keys.js';
import { AuthService } from './auth-service.js';

export interface AuthWiring {
  auth: AuthService;
  accounts: Accounts;
  apiKeys: ApiKeys;
}

export function wireAuth(ctx: Pick<PlatformContext, 'db' | 'redis' | 'keys' | 'config' | 'metrics' | 'logger'>): AuthWiring {
  const auth = new AuthService({ prisma: ctx.db.prisma, redis: ctx.redis, keys: ctx.keys, settings: ctx.config.auth, metrics: ctx.metrics });
  const accounts = new Accounts({ prisma: ctx.db.prisma, states: auth.states, auth, logger: ctx.logger.child({ domain: 'auth' }) });
  return { auth, accounts, apiKeys: new ApiKeys({ prisma: ctx.db.prisma, states: auth.states }) };
}
