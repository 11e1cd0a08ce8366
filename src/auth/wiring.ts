/** The auth domain's wiring: the users and API keys stores, token service, accounts and API keys, built once per API process. */
import type { PlatformContext } from '../context.js';
import { Accounts } from './accounts.js';
import { ApiKeyStore } from './api-key-store.js';
import { ApiKeys } from './api-keys.js';
import { AuthService } from './auth-service.js';
import { UserStore } from './user-store.js';

export interface AuthWiring {
  auth: AuthService;
  accounts: Accounts;
  apiKeys: ApiKeys;
}

export function wireAuth(ctx: Pick<PlatformContext, 'db' | 'redis' | 'keys' | 'config' | 'metrics' | 'logger'>): AuthWiring {
  const users = new UserStore(ctx.db.prisma);
  const keys = new ApiKeyStore(ctx.db.prisma);
  const auth = new AuthService({ users, apiKeys: keys, redis: ctx.redis, keys: ctx.keys, settings: ctx.config.auth, metrics: ctx.metrics });
  const accounts = new Accounts({ users, apiKeys: keys, states: auth.states, auth, logger: ctx.logger.child({ domain: 'auth' }) });
  return { auth, accounts, apiKeys: new ApiKeys({ users, apiKeys: keys, states: auth.states }) };
}
