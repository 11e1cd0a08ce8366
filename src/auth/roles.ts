/**
 * The two roles. An admin runs the platform (queues, jobs, dead jobs, Bull Board, cluster, users,
 * API keys, pool imports, IP writes); a user has its own feeds and articles and its own message
 * sessions, pops pools and reads IPs and leaderboards. An admin may do whatever a user may.
 */
import { z } from 'zod';

export const ROLES = ['admin', 'user'] as const;
export type Role = (typeof ROLES)[number];
export const roleSchema = z.enum(ROLES, { message: 'must be "admin" or "user"' });

/** Whether a caller with `role` may use what `required` guards. */
export function roleAllows(role: Role, required: Role): boolean {
  return role === 'admin' || required === 'user';
}
