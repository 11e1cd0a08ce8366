import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './database-unavailable.js';

describe('isDatabaseUnavailable', () => {
  it.each([
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }, true],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, true],
    [{ code: '57P03', message: 'the database system is starting up' }, true],
    [{ code: '08006', message: 'connection failure' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [{ code: 'P1001', message: "Can't reach database server" }, true],
    [new Error('driver adapter error', { cause: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' } }), true],
    [{ code: '23505', message: 'duplicate key value' }, false],
    [{ code: '42P01', message: 'relation "titles" does not exist' }, false],
    [new Error('something else'), false],
    [undefined, false],
  ])('%o → %s', (err, expected) => {
    expect(isDatabaseUnavailable(err)).toBe(expected);
  });
});
