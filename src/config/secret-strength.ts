/**
 * Whether a secret looks random enough to sign tokens with: at least 32 bytes, not a known example,
 * no word that says it is a placeholder, and not a word, a repetition, a run through a sequence or
 * a short alphabet. A random 32-byte secret written as hex or base64 spreads over 16 to 64 symbols
 * in no order; a sentence, `aaaa…`, `abcdef…0123…` or `dev-only-secret-change-me-…` does not. This
 * cannot prove randomness; it refuses what is clearly not (`openssl rand -base64 48` passes), and
 * each rule is far from what random text reaches (secret-strength.test.ts draws thousands).
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
  if (KNOWN_EXAMPLES.has(secret)) return 'is a published example secret (generate one: openssl rand -base64 48)';
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) return `must be at least ${MIN_SECRET_BYTES} bytes`;
  const marker = placeholderWord(secret);
  if (marker) return `looks like a placeholder: it contains "${marker}" (generate one: openssl rand -base64 48)`;
  // Thresholds far below what random text reaches: 32 random bytes in hex (16 symbols, the
  // narrowest usual alphabet) showed at least 12 distinct characters and 3.38 bits per character
  // over 300,000 draws; the thresholds must never refuse `openssl rand -hex 32`.
  const distinct = new Set(secret).size;
  if (distinct < 10 || bitsPerChar(secret) < 3.0) return 'does not look random (generate one: openssl rand -base64 48)';
  // A unit of 2 to 8 characters five times in a row, one character ten times, or any 10 characters
  // twice (random hex does any of these with a chance of about 10^-8 per secret).
  if (/(.{2,8})\1{4,}|(.)\2{9,}|(.{10,}).*\3/.test(secret)) return 'does not look random: it repeats itself (generate one: openssl rand -base64 48)';
  if (sequenceShare(secret) >= MAX_SEQUENCE_SHARE)
    return 'does not look random: it runs through a sequence (abcd…, 1234…, qwerty…) (generate one: openssl rand -base64 48)';
  return undefined;
}

/** Example secrets published with this platform (.env.example, earlier releases' docs). */
const KNOWN_EXAMPLES = new Set(['dev-only-secret-change-me-0123456789abcdef', 'dev-only-secret-change-me']);

/**
 * Words that say a value is a placeholder or a made-up secret, compared without case, digits
 * or separators (`Change_Me`, `s3cret` does not count). Six letters or more: random base64 holds
 * a given six-letter word (either case) with a chance of about 10^-7.
 */
const PLACEHOLDER_WORDS = [
  'changeme',
  'changeit',
  'secret',
  'example',
  'password',
  'passwd',
  'devonly',
  'default',
  'replaceme',
  'placeholder',
  'insecure',
  'notsecure',
  'letmein',
  'qwerty',
];

function placeholderWord(secret: string): string | undefined {
  const letters = secret.toLowerCase().replace(/[^a-z]/g, '');
  return PLACEHOLDER_WORDS.find((w) => letters.includes(w));
}

/** Sequences a made-up secret runs through: the alphabet, the digits, the keyboard's rows. */
const SEQUENCES = ['abcdefghijklmnopqrstuvwxyz', '0123456789', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm', '1234567890'];

/** Share of a secret in runs of 4+ characters that step through a sequence the same way (`abcd`, `9876`, `qwer`). */
export const MAX_SEQUENCE_SHARE = 0.4;

/** The share of `secret`'s characters that are part of such a run (case ignored). */
export function sequenceShare(secret: string): number {
  const s = secret.toLowerCase();
  const step = (a: string, b: string): number => {
    for (const seq of SEQUENCES) {
      const i = seq.indexOf(a);
      if (i < 0) continue;
      if (seq[i + 1] === b) return 1;
      if (i > 0 && seq[i - 1] === b) return -1;
    }
    return 0;
  };
  let covered = 0;
  let runLength = 1;
  let direction = 0;
  for (let i = 1; i <= s.length; i++) {
    const d = i < s.length ? step(s[i - 1]!, s[i]!) : 0;
    if (d !== 0 && (runLength === 1 || d === direction)) {
      runLength++;
      direction = d;
      continue;
    }
    if (runLength >= 4) covered += runLength;
    // A run that turns (`abcba`) starts again at its turning point.
    runLength = d !== 0 ? 2 : 1;
    direction = d;
  }
  return s.length ? covered / s.length : 0;
}
