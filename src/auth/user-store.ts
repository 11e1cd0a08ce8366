/**
 * The users table, its one store: accounts (create, list, find), the state a credential is
 * compared with (token version, role, disabled), and the statements of an account change, run in
 * the caller's transaction (accounts.ts orchestrates it: the new credential state goes to Redis
 * before the commit).
 *
 * Invariant: every change that must end earlier credentials raises `token_version` in the same
 * statement (`applyChange`).
 */
import type { Prisma, PrismaClient } from '../db/client.js';
import type { User } from '../generated/prisma/client.js';
import type { Role } from './roles.js';

/** Advisory lock key of the changes that may remove an admin (an arbitrary constant). */
const ADMIN_CHANGES_LOCK = 160_001;

export type Tx = Prisma.TransactionClient;

/** A user row as a change finds it, locked. */
export interface UserBefore {
  id: number;
  role: Role;
  disabled: boolean;
}

export const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === 'P2002';

export class UserStore {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs `work` in one transaction (also for the API keys store's statements: one client). */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** Creates a user; null when the name is taken. */
  async create(user: { username: string; passwordHash: string; role: Role }): Promise<User | null> {
    try {
      return await this.prisma.user.create({ data: user });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  list(): Promise<User[]> {
    return this.prisma.user.findMany({ orderBy: { id: 'asc' } });
  }

  find(id: number): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { id } });
  }

  findByName(username: string): Promise<User | null> {
    return this.prisma.user.findUnique({ where: { username } });
  }

  /** Every enabled account with its password hash (the production sweep of example passwords). */
  enabledPasswords(): Promise<{ id: number; username: string; passwordHash: string }[]> {
    return this.prisma.user.findMany({ where: { disabled: false }, select: { id: true, username: true, passwordHash: true } });
  }

  /** What a user's credential state is made of (credential-state.ts); null when there is no such user. */
  credentialRow(id: number): Promise<{ tokenVersion: number; disabled: boolean; role: Role } | null> {
    return this.prisma.user.findUnique({ where: { id }, select: { tokenVersion: true, disabled: true, role: true } });
  }

  // --- an account change, in the caller's transaction ---------------------------------------

  /** Serialises the changes that may take away an admin (taken before the row lock: no lock-order deadlock). */
  async lockAdminChanges(tx: Tx): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADMIN_CHANGES_LOCK})`;
  }

  /** The user's row as it is, locked until the commit; undefined when there is no such user. */
  async lockForChange(tx: Tx, id: number): Promise<UserBefore | undefined> {
    const [before] = await tx.$queryRaw<UserBefore[]>`SELECT id, role::text AS role, disabled FROM users WHERE id = ${id} FOR UPDATE`;
    return before;
  }

  async enabledAdmins(tx: Tx): Promise<number> {
    const [{ admins }] = await tx.$queryRaw<[{ admins: number }]>`SELECT count(*)::int AS admins FROM users WHERE role = 'admin' AND NOT disabled`;
    return admins;
  }

  /** Applies the changes and raises the token version (ending every earlier token). */
  applyChange(tx: Tx, id: number, changes: { role?: Role; disabled?: boolean; passwordHash?: string }): Promise<User> {
    return tx.user.update({
      where: { id },
      data: {
        ...(changes.role !== undefined ? { role: changes.role } : {}),
        ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
        ...(changes.passwordHash !== undefined ? { passwordHash: changes.passwordHash } : {}),
        tokenVersion: { increment: 1 },
      },
    });
  }
}
