/**
 * API keys as text: `wpk_<id>_<secret>`, the secret 32 random bytes in base64url. Only the
 * SHA-256 of the secret is stored (a random 256-bit secret needs no slow hash); the id finds the
 * row, and the secret is compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'wpk_';
const PATTERN = /^wpk_([1-9]\d{0,9})_([A-Za-z0-9_-]{43})$/;

export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(PREFIX);
}

export function parseApiKey(text: string): { id: number; secret: string } | undefined {
  const m = PATTERN.exec(text);
  if (!m) return undefined;
  const id = Number(m[1]);
  return id <= 2_147_483_647 ? { id, secret: m[2]! } : undefined;
}

export function newApiKeySecret(): string {
  return randomBytes(32).toString('base64url');
}

export function formatApiKey(id: number, secret: string): string {
  return `${PREFIX}${id}_${secret}`;
}

export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashApiKeySecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
