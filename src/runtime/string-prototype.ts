/**
 * String.prototype back in V8's fast mode once ioredis has loaded.
 *
 * ioredis 6.0.0 defines `class VerbatimString extends String`; in Node 20's V8 that puts
 * String.prototype in dictionary mode for the life of the process, and every string method call
 * (charCodeAt, startsWith, toLowerCase, ...) is no longer inlined (`npm run bench:strings`). A
 * property load through a String *object* at a call site V8 keeps feedback for (about 20 calls of
 * one small function; with 5 it had none yet) makes the receiver's prototypes fast again. It works
 * only through how V8's inline caches treat prototypes: call it after the modules that load
 * ioredis, and only where the gain is worth depending on an engine's internals.
 */
const loadThroughStringObject = (s: object): unknown => (s as { charCodeAt?: unknown }).charCodeAt;

export function refastenStringPrototype(): void {
  for (let i = 0; i < 200; i++) loadThroughStringObject(Object(''));
}
