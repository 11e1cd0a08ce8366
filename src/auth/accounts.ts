/**
 * User accounts: create, list, change (role, disabled, password), a user's own password change,
 * the admin of the environment at start, and the production sweep of example passwords.
 *
 * Every change that must end earlier credentials (password, role, disabled) raises the user's
 * token version in the same transaction, and stores the new credential state in Redis before the
 * transaction commits (credential-state.ts): every process refuses the earlier tokens from the
 * next request on, and when Redis cannot take the state nothing changes (503). Disabling a user,
 * or taking the admin role from it, also revokes its API keys (all of them, or its admin ones).
 */
import type { Logger } from '../logging/logger.js';
import { ConflictError, DependencyDownError, InvalidInputError, InvalidStateError, NotFoundError, UnauthenticatedError } from '../errors.js';
import type { User } from '../generated/prisma/client.js';
import { isRedisUnavailable } from '../redis/redis-unavailable.js';
import type { AuthService } from './auth-service.js';
import type { ApiKeyStore } from './api-key-store.js';
import { API_KEY_REVOKED, userState, type CredentialStates } from './credential-state.js';
import type { Role } from './roles.js';
import type { Tx, UserBefore, UserStore } from './user-store.js';

export interface UserView {
  id: number;
  username: string;
  role: Role;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export function userView(u: User): UserView {
  return { id: u.id, username: u.username, role: u.role, disabled: u.disabled, createdAt: u.createdAt, updatedAt: u.updatedAt };
}

export interface UserChanges {
  role?: Role | undefined;
  disabled?: boolean | undefined;
  password?: string | undefined;
}

export class Accounts {
  constructor(private readonly deps: { users: UserStore; apiKeys: ApiKeyStore; states: CredentialStates; auth: AuthService; logger: Logger }) {}

  async create(input: { username: string; password: string; role: Role }): Promise<UserView> {
    const user = await this.deps.users.create({ username: input.username, passwordHash: await this.deps.auth.hashPassword(input.password), role: input.role });
    if (!user) throw new ConflictError('username_taken', `a user named "${input.username}" exists`, { field: 'username' });
    return userView(user);
  }

  async list(): Promise<UserView[]> {
    return (await this.deps.users.list()).map(userView);
  }

  /** An admin's change of any user; the last enabled admin can neither be disabled nor lose the role. */
  async update(id: number, changes: UserChanges): Promise<UserView> {
    const mayRemoveAdmin = changes.disabled === true || changes.role === 'user';
    const user = await this.change(
      id,
      changes,
      async (tx, before) => {
        if (!mayRemoveAdmin || before.role !== 'admin' || before.disabled) return;
        if ((await this.deps.users.enabledAdmins(tx)) <= 1)
          throw new InvalidStateError('last_admin', 'the last enabled admin cannot be disabled or lose the admin role', {
            field: changes.disabled ? 'disabled' : 'role',
          });
      },
      mayRemoveAdmin,
    );
    return userView(user);
  }

  /** A user's own password change: the current password is checked within the login rate limit. */
  async changeOwnPassword(userId: number, currentPassword: string, newPassword: string, ip: string | undefined): Promise<void> {
    const found = await this.deps.users.find(userId);
    if (!found) throw new UnauthenticatedError('unknown_user', "the token's user does not exist");
    const checked = await this.deps.auth.checkPasswordLimited(found.username, currentPassword, ip, async () => found);
    if (!checked) throw new InvalidInputError('wrong_password', 'currentPassword is not the current password', { field: 'currentPassword' });
    await this.change(userId, { password: newPassword });
  }

  /**
   * The admin of the environment (ADMIN_USERNAME / ADMIN_PASSWORD): created, or made an enabled
   * admin with that password. A changed password raises the token version like any password change.
   */
  async ensureAdmin(username: string, password: string): Promise<void> {
    const { users, auth } = this.deps;
    const existing = await users.findByName(username);
    if (!existing) {
      // Null when another process created it at the same time.
      await users.create({ username, passwordHash: await auth.hashPassword(password), role: 'admin' });
      return;
    }
    const samePassword = await auth.checkPassword(password, existing.passwordHash);
    if (samePassword && existing.role === 'admin' && !existing.disabled) return;
    await this.change(existing.id, { role: 'admin', disabled: false, ...(samePassword ? {} : { password }) });
  }

  /**
   * Disables every enabled account whose password is the example one (production start), so that
   * an install that moved its admin to another name does not keep the old one open. Returns the
   * user names disabled.
   */
  async disableExamplePasswords(examplePassword: string): Promise<string[]> {
    const { users, auth, logger } = this.deps;
    const disabled: string[] = [];
    for (const u of await users.enabledPasswords()) {
      if (!(await auth.checkPassword(examplePassword, u.passwordHash))) continue;
      await this.change(u.id, { disabled: true });
      disabled.push(u.username);
      logger.warn({ username: u.username }, 'account disabled: it still had the example password (NODE_ENV=production); set a new password to enable it again');
    }
    return disabled;
  }

  /**
   * Applies changes in one transaction: the token version is raised and the new state stored in
   * Redis before the commit; API keys that may no longer act are revoked. `guard` runs first
   * inside the transaction (with the row as it was) and may refuse.
   */
  private async change(id: number, changes: UserChanges, guard?: (tx: Tx, before: UserBefore) => Promise<void>, serializeAdminChanges = false): Promise<User> {
    const { users, apiKeys, states } = this.deps;
    const passwordHash = changes.password !== undefined ? await this.deps.auth.hashPassword(changes.password) : undefined;
    try {
      return await users.transaction(async (tx) => {
        // Changes that may take away an admin run one at a time, so two of them cannot each leave the
        // other admin as the last one.
        if (serializeAdminChanges) await users.lockAdminChanges(tx);
        const before = await users.lockForChange(tx, id);
        if (!before) throw new NotFoundError('user_not_found', `no user ${id}`, { field: 'id' });
        await guard?.(tx, before);
        const user = await users.applyChange(tx, id, {
          ...(changes.role !== undefined ? { role: changes.role } : {}),
          ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
          ...(passwordHash !== undefined ? { passwordHash } : {}),
        });
        const revoked = user.disabled
          ? await apiKeys.revokeActive(tx, { userId: id })
          : user.role === 'user'
            ? await apiKeys.revokeActive(tx, { userId: id, role: 'admin' })
            : [];
        await states.raise({ kind: 'user', id }, userState(user));
        for (const keyId of revoked) await states.raise({ kind: 'apiKey', id: keyId }, API_KEY_REVOKED);
        return user;
      });
    } catch (err) {
      if (isRedisUnavailable(err))
        throw new DependencyDownError('redis', 'account changes need Redis, which ends the earlier credentials; nothing was changed', { cause: err });
      throw err;
    }
  }
}
