/**
 * The pool item as it sits in a Redis list: JSON `{"id":<id>,"text":"..."}` with the id first,
 * so the Lua scripts can read the id with one pattern match (ID_PATTERN) instead of decoding the
 * whole item. Pure: no Redis, no database.
 */

export type PoolType = 'titles' | 'contents';
export const POOL_TYPES: readonly PoolType[] = ['titles', 'contents'];

export interface PoolItem {
  id: number;
  text: string;
}

/** A row as the database hands it out: with its batch, which decides the order. */
export interface PoolRow extends PoolItem {
  batchId: number;
}

export type PoolSource = 'pool' | 'db';

export interface ServedItem extends PoolItem {
  source: PoolSource;
}

/** The Lua pattern that the scripts use to take the id out of an encoded item. */
export const ID_PATTERN = '^{"id":(%d+),';

export function encodeItem(item: PoolItem): string {
  if (!Number.isSafeInteger(item.id) || item.id < 0) throw new RangeError(`pool item id must be a non-negative integer, got ${item.id}`);
  return `{"id":${item.id},"text":${JSON.stringify(item.text)}}`;
}

export function decodeItem(raw: string): PoolItem {
  return itemOf(JSON.parse(raw));
}

/** An encoded item once JSON.parse read it (alone, or inside a pop script's reply); throws unless it is one. */
export function itemOf(parsed: unknown): PoolItem {
  const { id, text } = (parsed ?? {}) as { id?: unknown; text?: unknown };
  if (typeof id !== 'number' || typeof text !== 'string') throw new TypeError('not a pool item');
  return { id, text };
}

/** The id of an encoded item, read the way the Lua scripts read it (undefined when malformed). */
export function idOfEncoded(raw: string): number | undefined {
  const m = /^\{"id":(\d+),/.exec(raw);
  return m ? Number(m[1]) : undefined;
}

/** The serving order: newest batch first, then by id (`batch_id DESC, id ASC`). */
export function compareServingOrder(a: Pick<PoolRow, 'batchId' | 'id'>, b: Pick<PoolRow, 'batchId' | 'id'>): number {
  return b.batchId - a.batchId || a.id - b.id;
}
