/** Who a request acts as (an API token's or an API key's holder): what authentication yields and the routes see. */
import type { CredentialRef } from './credential-state.js';
import type { Role } from './roles.js';

/** Who a request acts as, from its token or API key. */
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
