/**
 * The api_keys table, its one store: keys (create, list), what verifying one reads (the row with
 * its user's name), the state a key's requests are compared with (revoked or not), and the
 * revocations, run in the caller's transaction (api-keys.ts, accounts.ts: the new state goes to
 * Redis before the commit). Only the hash of a key's secret is stored.
 */
import type { PrismaClient } from '../db/client.js';
import type { ApiKey } from '../generated/prisma/client.js';
import type { Role } from './roles.js';
import type { Tx } from './user-store.js';

export class ApiKeyStore {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs `work` in one transaction. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  create(key: { name: string; userId: number; role: Role; secretHash: string }): Promise<ApiKey> {
    return this.prisma.apiKey.create({ data: key });
  }

  list(): Promise<ApiKey[]> {
    return this.prisma.apiKey.findMany({ orderBy: { id: 'asc' } });
  }

  /** A key with its user's name (verifying a key's text); null when there is no such key. */
  findWithUser(id: number): Promise<(ApiKey & { user: { username: string } }) | null> {
    return this.prisma.apiKey.findUnique({ where: { id }, include: { user: { select: { username: true } } } });
  }

  /** When a key was revoked (null: active); undefined when there is no such key. */
  async revokedAt(id: number): Promise<Date | null | undefined> {
    const row = await this.prisma.apiKey.findUnique({ where: { id }, select: { revokedAt: true } });
    return row ? row.revokedAt : undefined;
  }

  // --- revocations, in the caller's transaction ----------------------------------------------

  /** Revokes one key: 'missing' when there is no such key, else revoked now or already. */
  async revoke(tx: Tx, id: number): Promise<'missing' | 'revoked'> {
    const key = await tx.apiKey.findUnique({ where: { id } });
    if (!key) return 'missing';
    if (!key.revokedAt) await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    return 'revoked';
  }

  /** Revokes a user's active keys (only its admin ones with `role`); returns their ids. */
  async revokeActive(tx: Tx, of: { userId: number; role?: Role }): Promise<number[]> {
    const keys = await tx.apiKey.findMany({ where: { ...of, revokedAt: null }, select: { id: true } });
    if (keys.length) await tx.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { revokedAt: new Date() } });
    return keys.map((k) => k.id);
  }
}
