/**
 * How a message looks in the cache and in API answers, and what a cached slice can answer.
 *
 * A session's cache list holds one JSON entry per message, oldest first, exactly as the API
 * returns it, so a cache read sends the entries without parsing them. The list may start with
 * SESSION_START, a marker meaning "the session's first message follows": it is set when the
 * list was filled from a DB that held the whole session, and LTRIM drops it once the list is
 * full. A list without the marker is a suffix of the session (messages appended after the key
 * expired or was deleted) and answers only reads it holds enough messages for.
 */
import type { AcceptedMessage, MessageRole } from '../queues/declarations/messages.js';

export interface MessageView {
  id: string;
  seq: number;
  role: MessageRole;
  content: string;
  createdAt: string;
}

/** The marker at the head of a list that holds the whole session. Never valid message JSON. */
export const SESSION_START = '#session-start';

export function viewOf(m: AcceptedMessage): MessageView {
  return { id: m.messageId, seq: m.seq, role: m.role, content: m.content, createdAt: m.acceptedAt };
}

/** The entry of a message: fixed key order, so the cache and the DB path produce the same bytes. */
export function entryOf(v: MessageView): string {
  return JSON.stringify({ id: v.id, seq: v.seq, role: v.role, content: v.content, createdAt: v.createdAt });
}

const SEQ_OF_ENTRY = /^\{"id":"[^"\\]*","seq":(\d+),/;
const ID_OF_ENTRY = /^\{"id":"([^"\\]*)"/;

/** The id of an entry (read without parsing the content). */
export function idOfEntry(entry: string): string | undefined {
  return ID_OF_ENTRY.exec(entry)?.[1];
}

/** The seq of an entry (read without parsing the content). */
export function seqOfEntry(entry: string): number | undefined {
  const m = SEQ_OF_ENTRY.exec(entry);
  return m ? Number(m[1]) : undefined;
}

/**
 * What a cache read of the last `min(limit, maxLen)` list elements answers: the entries when the
 * slice holds `limit` messages or starts at the session's first message, else undefined (a miss).
 */
export function answerFromCache(slice: string[], limit: number): string[] | undefined {
  if (slice.length === 0) return undefined;
  if (slice[0] === SESSION_START) return slice.slice(1);
  return slice.length >= limit ? slice.slice(-limit) : undefined;
}

/** The JSON body of a read answer, built from entries without parsing them. */
export function readAnswerJson(entries: string[], source: 'cache' | 'db'): string {
  return `{"messages":[${entries.join(',')}],"source":"${source}"}`;
}
