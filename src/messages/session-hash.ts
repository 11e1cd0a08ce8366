/**
 * A session's 32-bit hash (FNV-1a over its UTF-16 code units), which picks its cache connection
 * and its persist buffer. Stable across processes, so every API process sends a session's
 * messages to the same buffer.
 */
export function sessionHash(sessionId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) h = Math.imul(h ^ sessionId.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
