/**
 * Block detection shared by the adapters: the HTTP status first, then a challenge widget in
 * the DOM, then the wording of CAPTCHA / challenge / denial pages. Wording is only looked at
 * when the page shows no result rows, so an item titled "captcha" does not read as a block.
 */
import type { PageSnapshot } from './site-adapter.js';

const BLOCK_STATUSES: Record<number, string> = { 403: 'HTTP 403 Forbidden', 429: 'HTTP 429 Too Many Requests' };

export const COMMON_BLOCK_WORDING: RegExp[] = [
  /captcha/i,
  /verify (that )?you are (a )?human/i,
  /are you a robot/i,
  /unusual traffic/i,
  /just a moment/i, // Cloudflare interstitial
  /attention required/i, // Cloudflare block page
  /access denied/i,
  /too many requests/i,
];

export function detectBlock(snapshot: PageSnapshot, extraWording: RegExp[] = []): string | null {
  const byStatus = BLOCK_STATUSES[snapshot.httpStatus];
  if (byStatus) return byStatus;
  if (snapshot.challengeElement) return 'CAPTCHA / challenge on the page';
  if (snapshot.rowCount > 0) return null;
  const wording = [...COMMON_BLOCK_WORDING, ...extraWording];
  const hit = wording.find((re) => re.test(snapshot.title) || re.test(snapshot.text));
  return hit ? `block page (${hit.source})` : null;
}

/** Milliseconds from a Retry-After header (seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
