/**
 * The state of a credential in Redis, which every request compares with what its credential
 * carries (docs/security.md#tokens-logout-and-ending-tokens): a user's (`auth:user:{id}`) is
 * "<version>:<role>" or "<version>:disabled", an API key's (`auth:key:{id}`) "1" or "2:revoked",
 * a credential with no row "0:missing" (kept MISSING_TTL_SECONDS).
 *
 * Invariants: the database is the source (a state missing from Redis is read from it and stored);
 * the leading number only grows, and a state is only ever replaced by one with a higher number
 * (RAISE), so a fill that read the database just before a change cannot put the old state back; a
 * change stores its new state before its transaction commits (accounts.ts). A user state of an
 * earlier release, "<version>" alone, reads as missing and RAISE gives it its role at the same
 * number, so tokens issued before an upgrade stay current.
 */
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { Role } from './roles.js';
import type { UserStore } from './user-store.js';

export const MISSING_TTL_SECONDS = 300;
export const API_KEY_ACTIVE = '1';
export const API_KEY_REVOKED = '2:revoked';
export const MISSING = '0:missing';

const RAISE = RedisScript.load('credential-raise', new URL('./credential-raise.lua', import.meta.url), { keys: ['state'], args: ['newState', 'ttlSeconds'] });

/** A user's state from its row (undefined: no such user). */
export function userState(row: { tokenVersion: number; disabled: boolean; role: Role } | null | undefined): string {
  if (!row) return MISSING;
  return row.disabled ? `${row.tokenVersion}:disabled` : `${row.tokenVersion}:${row.role}`;
}

/** The state a token carries: the version and role it was issued with. */
export function tokenState(claims: { version: number; role: Role }): string {
  return `${claims.version}:${claims.role}`;
}

/** A user state of an earlier release: the version alone. */
const LEGACY_USER_STATE = /^\d+$/;

/** An API key's state from its row (undefined: no such key). */
export function apiKeyState(row: { revokedAt: Date | null } | null | undefined): string {
  if (!row) return MISSING;
  return row.revokedAt ? API_KEY_REVOKED : API_KEY_ACTIVE;
}

export type CredentialRef = { kind: 'user'; id: number } | { kind: 'apiKey'; id: number };

export class CredentialStates {
  constructor(private readonly deps: { redis: RedisClient; keys: Keys; users: UserStore; apiKeys: ApiKeyStore }) {}

  key(ref: CredentialRef): string {
    return ref.kind === 'user' ? this.deps.keys.userCredential(ref.id) : this.deps.keys.apiKeyCredential(ref.id);
  }

  /** The state held in Redis, undefined when Redis holds none. Throws when Redis cannot answer. */
  async cached(ref: CredentialRef): Promise<string | undefined> {
    const state = (await this.deps.redis.get(this.key(ref))) ?? undefined;
    return ref.kind === 'user' && state !== undefined && LEGACY_USER_STATE.test(state) ? undefined : state;
  }

  /** The state, read from the database and stored when Redis holds none. */
  async current(ref: CredentialRef): Promise<string> {
    return (await this.cached(ref)) ?? this.fill(ref);
  }

  /** Reads the state from the database and stores it (unless a newer one is there); returns the state held. */
  async fill(ref: CredentialRef): Promise<string> {
    return this.raise(ref, await this.fromDatabase(ref));
  }

  /** The state as the database has it (Redis not consulted). */
  async fromDatabase(ref: CredentialRef): Promise<string> {
    if (ref.kind === 'user') return userState(await this.deps.users.credentialRow(ref.id));
    const revokedAt = await this.deps.apiKeys.revokedAt(ref.id);
    return apiKeyState(revokedAt === undefined ? null : { revokedAt });
  }

  /** Stores `state` unless Redis holds a newer one; returns the state held. */
  raise(ref: CredentialRef, state: string): Promise<string> {
    return RAISE.run<string>(this.deps.redis, { state: this.key(ref) }, { newState: state, ttlSeconds: state === MISSING ? MISSING_TTL_SECONDS : 0 });
  }
}
