/**
 * The Lua scripts of a lease. The value of a lease key is "<instance id>#<fencing token>@<owner>",
 * so a renewal or release only acts on the term it was issued for; the owner is a random id of the
 * process (LeaseManager), by which it recognises a value of its own (lease-acquire.lua), even when
 * two processes were given the same INSTANCE_ID.
 */
import { RedisScript } from '../redis/script.js';

/** Takes a free lease and issues the next fencing token (lease-acquire.lua). */
export const acquireLease = RedisScript.load('lease-acquire', new URL('./lease-acquire.lua', import.meta.url), {
  keys: ['lease', 'tokenCounter'],
  args: ['instanceId', 'ttlMs', 'owner'],
});

/** Extends the lease while it still holds this term's value (lease-renew.lua). */
export const renewLease = RedisScript.load('lease-renew', new URL('./lease-renew.lua', import.meta.url), { keys: ['lease'], args: ['termValue', 'ttlMs'] });

/** The value a term writes into its lease (as lease-acquire.lua writes it). */
export function leaseValue(instanceId: string, token: number, owner: string): string {
  return `${instanceId}#${token}@${owner}`;
}

/** The holder of a lease value ("<instance>#<token>@<owner>"; an older release wrote no owner). */
export function parseLeaseValue(value: string | null): { instanceId: string; token: number } | null {
  if (!value) return null;
  const at = value.lastIndexOf('#');
  if (at < 0) return { instanceId: value, token: 0 };
  return { instanceId: value.slice(0, at), token: Number.parseInt(value.slice(at + 1), 10) };
}
