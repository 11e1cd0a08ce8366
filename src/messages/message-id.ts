import { randomUUID } from 'node:crypto';

/**
 * A message id: a UUID version 7 (RFC 9562), 48 bits of milliseconds then random bits. Ids of
 * messages accepted close together sort close together, so the unique index on message_id grows
 * at its right edge instead of splitting pages all over (the persist INSERT's index upkeep).
 */
export function newMessageId(nowMs: number = Date.now(), random: string = randomUUID()): string {
  const time = Math.floor(nowMs).toString(16).padStart(12, '0').slice(-12);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
