/**
 * API keys for programs (pool pops, message appends all day): an admin creates one for a user,
 * with a role no higher than the user's; its text is shown once; only the hash of its secret is
 * stored; revoking it (or disabling its user) ends it at once everywhere (credential-state.ts).
 */
import { DependencyDownError, InvalidInputError, InvalidStateError, NotFoundError } from '../errors.js';
import type { ApiKey } from '../generated/prisma/client.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import { formatApiKey, hashApiKeySecret, newApiKeySecret } from './api-key-format.js';
import type { ApiKeyStore } from './api-key-store.js';
import { API_KEY_ACTIVE, API_KEY_REVOKED, type CredentialStates } from './credential-state.js';
import { roleAllows, type Role } from './roles.js';
import type { UserStore } from './user-store.js';

export interface ApiKeyView {
  id: number;
  name: string;
  userId: number;
  role: Role;
  createdAt: Date;
  revokedAt: Date | null;
}

function keyView(k: ApiKey): ApiKeyView {
  return { id: k.id, name: k.name, userId: k.userId, role: k.role, createdAt: k.createdAt, revokedAt: k.revokedAt };
}

export class ApiKeys {
  constructor(private readonly deps: { users: UserStore; apiKeys: ApiKeyStore; states: CredentialStates }) {}

  /** Creates a key; the answer holds its text (`key`), which is never shown again. */
  async create(input: { name: string; userId: number; role: Role }): Promise<ApiKeyView & { key: string }> {
    const { users, apiKeys, states } = this.deps;
    const user = await users.find(input.userId);
    if (!user) throw new NotFoundError('user_not_found', `no user ${input.userId}`, { field: 'userId' });
    if (user.disabled) throw new InvalidStateError('user_disabled', `user ${input.userId} is disabled`, { field: 'userId' });
    if (!roleAllows(user.role, input.role))
      throw new InvalidInputError('role_too_high', `user ${input.userId} is not an admin; its keys can only have the role "user"`, { field: 'role' });
    const secret = newApiKeySecret();
    const key = await apiKeys.create({ name: input.name, userId: input.userId, role: input.role, secretHash: hashApiKeySecret(secret) });
    // Stored now, so that the key's first requests need no database read (a fill would do it otherwise).
    await states.raise({ kind: 'apiKey', id: key.id }, API_KEY_ACTIVE).catch(() => undefined);
    return { ...keyView(key), key: formatApiKey(key.id, secret) };
  }

  async list(): Promise<ApiKeyView[]> {
    return (await this.deps.apiKeys.list()).map(keyView);
  }

  /** Revokes a key (idempotent); its requests are refused from now on. */
  async revoke(id: number): Promise<void> {
    const { apiKeys, states } = this.deps;
    try {
      await apiKeys.transaction(async (tx) => {
        if ((await apiKeys.revoke(tx, id)) === 'missing') throw new NotFoundError('api_key_not_found', `no API key ${id}`, { field: 'id' });
        await states.raise({ kind: 'apiKey', id }, API_KEY_REVOKED);
      });
    } catch (err) {
      if (isRedisUnavailable(err)) throw new DependencyDownError('redis', 'revoking a key needs Redis; nothing was changed', { cause: err });
      throw err;
    }
  }
}
