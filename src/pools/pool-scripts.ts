/**
 * Lua scripts of the pools. Every key one script touches shares the pool's hash tag
 * ({type:group}, see src/redis/keys.ts), so each runs atomically in one slot of a Cluster too.
 * Items are encoded by pool-item.ts with the id first; ID_PATTERN reads it without decoding.
 */
import { GuardedScript } from '../revocation/guarded-script.js';
import { RedisScript } from '../redis/script.js';
import { aofGuardLua } from './aof-guard.js';
import { ID_PATTERN } from './pool-item.js';

/** Pops one item (FIFO) into the consumed list, atomically, after the caller's credential check: the hot path of pop (pool-pop-one.lua). */
export const popOneScript = GuardedScript.load(
  'pool-pop-one',
  new URL('./pool-pop-one.lua', import.meta.url),
  { keys: ['pool', 'consumed'], args: [] },
  { aofGuard: aofGuardLua },
);

/** Pops up to `count` items (FIFO) into the consumed list, atomically, after the caller's credential check (pool-pop.lua). */
export const popScript = GuardedScript.load(
  'pool-pop',
  new URL('./pool-pop.lua', import.meta.url),
  { keys: ['pool', 'consumed'], args: ['count'] },
  { aofGuard: aofGuardLua },
);

/** Pushes items only while the caller still holds the refill lock (fencing), and extends the lock (pool-push.lua). */
export const pushScript = RedisScript.load('pool-push', new URL('./pool-push.lua', import.meta.url), { keys: ['pool', 'lock'], args: ['token', 'lockTtlMs'] });

/** Every id in the pool and in the consumed list, read at one instant: the recovery's snapshot (pool-snapshot.lua). */
export const snapshotScript = RedisScript.load(
  'pool-snapshot',
  new URL('./pool-snapshot.lua', import.meta.url),
  { keys: ['pool', 'consumed'], args: [] },
  { idPattern: ID_PATTERN },
);

/** Removes the items a marking job read (and marked) from the old end of the consumed list (pool-trim-consumed.lua). */
export const trimConsumedScript = RedisScript.load('pool-trim-consumed', new URL('./pool-trim-consumed.lua', import.meta.url), {
  keys: ['consumed'],
  args: ['oldest', 'count'],
});
