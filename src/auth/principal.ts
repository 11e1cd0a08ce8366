/** Who a request acts as, from its token or API key (made by credential-check.ts and api-key-verifier.ts). */
import type { CredentialRef } from './credential-state.js';
import type { Revocation } from '../revocation/revocation.js';
import type { Role } from './roles.js';

export interface Principal {
  kind: 'token' | 'apiKey';
  userId: number;
  username: string;
  role: Role;
  /** The token's session id (the logout blacklist's key); `apikey-<id>` for an API key. */
  sessionId: string;
  /** Token expiry, seconds since the epoch; absent for API keys (they live until revoked). */
  exp?: number;
  /** Whose state decides whether the credential is current, and the state it must have. */
  credential: CredentialRef;
  expectedState: string;
}

export interface VerifiedToken extends Principal {
  /** False when Redis was down and AUTH_FAIL_OPEN let the token through without the blacklist, or when the check is left to the handler. */
  blacklistChecked: boolean;
  /** Present when the credential check is left to the request's own Redis script (see src/revocation/revocation.ts). */
  revocation?: Revocation;
}
