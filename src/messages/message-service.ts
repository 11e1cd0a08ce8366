/**
 * The message cache as the API uses it: the owner check, then the write or read path. The parts
 * (Redis, queues, database) are wired in wiring.ts, once per API process.
 */
import type { Revocation } from '../revocation/revocation.js';
import type { MessageRole } from '../queues/declarations/messages.js';
import { appendMessage, type AppendDeps, type AppendResult } from './append-message.js';
import { readMessages, type ReadDeps, type ReadResult } from './read-messages.js';
import type { SessionOwners } from './session-owners.js';

/**
 * The caller's credential is checked before its session's owner is read or claimed, so that a
 * logged-out or changed credential claims nothing and learns nothing (401 before any 404).
 */
async function checkFirst<T>(revocation: Revocation | undefined, then: () => Promise<T>): Promise<T> {
  await revocation?.check();
  return then();
}

/** The read of a session nobody owns: it has no messages, and reading it writes nothing (no cache list is made for it). */
const NO_SESSION: ReadResult = { source: 'db', entries: [] };

/**
 * `userId`: the caller, who must own the session (session-owners.ts; a write to a session nobody
 * owns makes it the caller's). `revocation`: the caller's credential check, made in the request's
 * own Redis script (src/revocation/revocation.ts), or up front when the owner must be read or claimed.
 */
export interface MessageService {
  append(userId: number, sessionId: string, role: MessageRole, content: string, revocation?: Revocation): Promise<AppendResult>;
  read(userId: number, sessionId: string, limit: number, revocation?: Revocation): Promise<ReadResult>;
}

/** The service over its wired parts (see wiring.ts): the owner check, then the append or read path. */
export function messageService(owners: SessionOwners, appendDeps: AppendDeps, readDeps: ReadDeps): MessageService {
  return {
    // A session this process knows to be the caller's goes straight on (no await before the append:
    // append-message.ts needs its steps in one synchronous run).
    append: (userId, sessionId, role, content, revocation) =>
      owners.ownedBy(sessionId, userId)
        ? appendMessage(appendDeps, sessionId, role, content, revocation)
        : checkFirst(revocation, () => owners.claim(sessionId, userId)).then(() => appendMessage(appendDeps, sessionId, role, content, revocation)),
    read: (userId, sessionId, limit, revocation) =>
      owners.ownedBy(sessionId, userId)
        ? readMessages(readDeps, sessionId, limit, revocation)
        : checkFirst(revocation, () => owners.assertReadable(sessionId, userId)).then((owned) =>
            owned ? readMessages(readDeps, sessionId, limit, revocation) : NO_SESSION,
          ),
  };
}
