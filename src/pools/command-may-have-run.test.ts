import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { commandMayHaveRun } from './command-may-have-run.js';
import { DeadlineError } from '../lib/timeout.js';

class ReplyError extends Error {
  override name = 'ReplyError';
}
class MaxRetriesPerRequestError extends Error {
  override name = 'MaxRetriesPerRequestError';
}

describe('commandMayHaveRun', () => {
  it.each([
    [new DeadlineError(500), true],
    [new MaxRetriesPerRequestError('Reached the max retries per request limit (which is 0).'), true],
    [new Error('Connection is closed.'), true],
    [new Error('something unexpected'), true],
    [undefined, true],
    [new Error("Stream isn't writeable and enableOfflineQueue options is false"), false],
    [new ReplyError('OOM command not allowed when used memory > maxmemory'), false],
  ])('%o → %s', (err, expected) => {
    expect(commandMayHaveRun(err)).toBe(expected);
  });

  it('knows the error of a connection that is not up (the installed ioredis)', async () => {
    const client = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    const err = await client.get('x').catch((e: unknown) => e);
    client.disconnect();
    expect(commandMayHaveRun(err)).toBe(false);
  });
});
