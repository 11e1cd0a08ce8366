import type { PrismaClient } from '../db/client.js';
import { hashPassword, verifyPassword } from './passwords.js';

/** Creates the admin user, or updates its password when it changed in the environment. */
export async function ensureAdminUser(prisma: PrismaClient, username: string, password: string): Promise<void> {
  const existing = await prisma.user.findUnique({ where: { username } });
  if (!existing) {
    await prisma.user.upsert({
      where: { username },
      create: { username, passwordHash: await hashPassword(password), isAdmin: true },
      update: {},
    });
    return;
  }
  if (!existing.isAdmin || !(await verifyPassword(password, existing.passwordHash))) {
    await prisma.user.update({ where: { id: existing.id }, data: { passwordHash: await hashPassword(password), isAdmin: true } });
  }
}
