/**
 * Recognises API keys: the key's row by its id, its secret against the stored hash. A key verified
 * once is remembered by its exact text (what it says never changes; whether it is still active is
 * its credential state, checked on every request like a token's, see credential-state.ts).
 */
import { parseApiKey, secretMatches } from './api-key-format.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { Principal } from './principal.js';
import { API_KEY_ACTIVE } from './credential-state.js';

const VERIFIED_CACHE_SIZE = 10_000;

export class ApiKeyVerifier {
  private readonly verified = new Map<string, Principal>();

  constructor(private readonly keys: ApiKeyStore) {}

  known(text: string): Principal | undefined {
    return this.verified.get(text);
  }

  /** The principal of a valid, unrevoked key; undefined otherwise. */
  async verify(text: string): Promise<Principal | undefined> {
    const known = this.verified.get(text);
    if (known) return known;
    const parsed = parseApiKey(text);
    if (!parsed) return undefined;
    const key = await this.keys.findWithUser(parsed.id);
    if (!key || key.revokedAt || !secretMatches(parsed.secret, key.secretHash)) return undefined;
    const principal: Principal = {
      kind: 'apiKey',
      userId: key.userId,
      username: key.user.username,
      role: key.role,
      sessionId: `apikey-${key.id}`,
      credential: { kind: 'apiKey', id: key.id },
      expectedState: API_KEY_ACTIVE,
    };
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(text, principal);
    return principal;
  }
}
